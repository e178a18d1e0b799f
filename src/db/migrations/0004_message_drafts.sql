CREATE TABLE "message_drafts" (
	"id" text PRIMARY KEY NOT NULL,
	"portal_id" integer NOT NULL,
	"message" jsonb NOT NULL,
	"recipients" jsonb NOT NULL,
	"from_phone_number_id" text,
	"sent_at" timestamp (3) with time zone,
	"send_result" jsonb,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "message_drafts" ADD CONSTRAINT "message_drafts_portal_id_portals_id_fk" FOREIGN KEY ("portal_id") REFERENCES "public"."portals"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "message_drafts_portal_page" ON "message_drafts" USING btree ("portal_id","created_at","id");