CREATE TABLE "webhook_replays" (
	"id" text PRIMARY KEY NOT NULL,
	"portal_id" integer NOT NULL,
	"endpoint_id" text NOT NULL,
	"criteria" jsonb NOT NULL,
	"event_count" integer NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "webhook_deliveries" ADD COLUMN "replay_id" text;--> statement-breakpoint
ALTER TABLE "webhook_events" ADD COLUMN "position" bigint;--> statement-breakpoint
-- Existing events get their positions in the order they were created.
UPDATE "webhook_events" AS e SET "position" = o.n FROM (SELECT "id", row_number() OVER (ORDER BY "created_at", "id") AS n FROM "webhook_events") AS o WHERE o."id" = e."id";--> statement-breakpoint
ALTER TABLE "webhook_events" ALTER COLUMN "position" SET NOT NULL;--> statement-breakpoint
ALTER TABLE "webhook_events" ALTER COLUMN "position" ADD GENERATED ALWAYS AS IDENTITY (sequence name "webhook_events_position_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1);--> statement-breakpoint
SELECT setval('webhook_events_position_seq', coalesce((SELECT max("position") FROM "webhook_events"), 0) + 1, false);--> statement-breakpoint
ALTER TABLE "webhook_events" ADD COLUMN "writer_xid" "xid8" DEFAULT pg_current_xact_id() NOT NULL;--> statement-breakpoint
ALTER TABLE "webhook_replays" ADD CONSTRAINT "webhook_replays_portal_id_portals_id_fk" FOREIGN KEY ("portal_id") REFERENCES "public"."portals"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "webhook_replays" ADD CONSTRAINT "webhook_replays_endpoint_id_webhook_endpoints_id_fk" FOREIGN KEY ("endpoint_id") REFERENCES "public"."webhook_endpoints"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "webhook_replays_endpoint" ON "webhook_replays" USING btree ("endpoint_id","created_at");--> statement-breakpoint
ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_replay_id_webhook_replays_id_fk" FOREIGN KEY ("replay_id") REFERENCES "public"."webhook_replays"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "webhook_deliveries_replay" ON "webhook_deliveries" USING btree ("replay_id") WHERE "webhook_deliveries"."replay_id" is not null;--> statement-breakpoint
CREATE INDEX "webhook_events_log" ON "webhook_events" USING btree ("portal_id","writer_xid","position");--> statement-breakpoint
CREATE INDEX "webhook_events_created" ON "webhook_events" USING btree ("created_at");