CREATE TABLE "message_daily_counts" (
	"portal_id" integer NOT NULL,
	"day" date NOT NULL,
	"shard" smallint NOT NULL,
	"sent" integer DEFAULT 0 NOT NULL,
	"delivered" integer DEFAULT 0 NOT NULL,
	"read" integer DEFAULT 0 NOT NULL,
	"failed" integer DEFAULT 0 NOT NULL,
	CONSTRAINT "message_daily_counts_portal_id_day_shard_pk" PRIMARY KEY("portal_id","day","shard")
);
--> statement-breakpoint
DROP INDEX "audit_events_portal_time";--> statement-breakpoint
ALTER TABLE "audit_events" ALTER COLUMN "occurred_at" SET DATA TYPE timestamp (3) with time zone;--> statement-breakpoint
ALTER TABLE "audit_events" ALTER COLUMN "occurred_at" SET DEFAULT now();--> statement-breakpoint
ALTER TABLE "message_daily_counts" ADD CONSTRAINT "message_daily_counts_portal_id_portals_id_fk" FOREIGN KEY ("portal_id") REFERENCES "public"."portals"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "audit_events_portal_page" ON "audit_events" USING btree ("portal_id","occurred_at","id");--> statement-breakpoint
INSERT INTO "message_daily_counts" ("portal_id", "day", "shard", "sent", "delivered", "read", "failed")
SELECT "portal_id", ("created_at" AT TIME ZONE 'UTC')::date, ascii(right("id", 1)) % 16,
  count(*) FILTER (WHERE "status" = 'sent'), count(*) FILTER (WHERE "status" = 'delivered'),
  count(*) FILTER (WHERE "status" = 'read'), count(*) FILTER (WHERE "status" = 'failed')
FROM "messages" WHERE "status" <> 'queued' GROUP BY 1, 2, 3;
