-- One table for messages of both directions: the outbound rows stay where they are (their
-- `to` and `from` renamed to the direction-neutral `wa_id` and `phone_number_id`), the inbound
-- rows move in with their ids unchanged (content sealed with the message id as associated data
-- stays valid), and `inbound_messages` goes.
DROP INDEX "messages_portal_wamid";--> statement-breakpoint
DROP INDEX "messages_portal_status_page";--> statement-breakpoint
ALTER TABLE "messages" RENAME COLUMN "to" TO "wa_id";--> statement-breakpoint
ALTER TABLE "messages" RENAME COLUMN "from" TO "phone_number_id";--> statement-breakpoint
ALTER INDEX "messages_portal_to_page" RENAME TO "messages_portal_wa_id_page";--> statement-breakpoint
ALTER TABLE "messages" ADD COLUMN "direction" text DEFAULT 'outbound' NOT NULL;--> statement-breakpoint
ALTER TABLE "messages" ALTER COLUMN "direction" DROP DEFAULT;--> statement-breakpoint
ALTER TABLE "messages" ALTER COLUMN "status" DROP DEFAULT;--> statement-breakpoint
ALTER TABLE "messages" ALTER COLUMN "status" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "messages" ALTER COLUMN "queued_at" DROP DEFAULT;--> statement-breakpoint
ALTER TABLE "messages" ALTER COLUMN "queued_at" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "messages" ALTER COLUMN "price_minor" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "messages" ALTER COLUMN "currency" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "messages" ADD COLUMN "media_id" text;--> statement-breakpoint
ALTER TABLE "messages" ADD COLUMN "context_provider_message_id" text;--> statement-breakpoint
ALTER TABLE "messages" ADD COLUMN "context_message_id" text;--> statement-breakpoint
ALTER TABLE "messages" ADD COLUMN "stored_at" timestamp (3) with time zone;--> statement-breakpoint
INSERT INTO "messages" ("id", "portal_id", "direction", "contact_id", "wa_id", "phone_number_id",
  "type", "content", "provider_message_id", "media_id", "context_provider_message_id",
  "context_message_id", "read_at", "stored_at", "created_at")
SELECT "id", "portal_id", 'inbound', "contact_id", "from", "phone_number_id", "type", "content",
  "provider_message_id", "media_id", "context_provider_message_id", "context_message_id",
  "read_at", "created_at", "received_at"
FROM "inbound_messages";--> statement-breakpoint
DROP TABLE "inbound_messages";--> statement-breakpoint
CREATE UNIQUE INDEX "messages_inbound_portal_wamid" ON "messages" USING btree ("portal_id","provider_message_id") WHERE "messages"."direction" = 'inbound';--> statement-breakpoint
CREATE UNIQUE INDEX "messages_portal_wamid" ON "messages" USING btree ("portal_id","provider_message_id") WHERE "messages"."direction" = 'outbound';--> statement-breakpoint
CREATE INDEX "messages_portal_direction_page" ON "messages" USING btree ("portal_id","direction","created_at","id");--> statement-breakpoint
CREATE INDEX "messages_portal_status_page" ON "messages" USING btree ("portal_id","status","created_at","id") WHERE "messages"."direction" = 'outbound';--> statement-breakpoint
ALTER TABLE "messages" ADD CONSTRAINT "messages_outbound_columns" CHECK ("messages"."direction" <> 'outbound' OR ("messages"."status" IS NOT NULL AND "messages"."queued_at" IS NOT NULL AND "messages"."price_minor" IS NOT NULL AND "messages"."currency" IS NOT NULL AND "messages"."media_id" IS NULL AND "messages"."context_provider_message_id" IS NULL AND "messages"."context_message_id" IS NULL AND "messages"."stored_at" IS NULL));--> statement-breakpoint
ALTER TABLE "messages" ADD CONSTRAINT "messages_inbound_columns" CHECK ("messages"."direction" <> 'inbound' OR ("messages"."provider_message_id" IS NOT NULL AND "messages"."stored_at" IS NOT NULL AND "messages"."status" IS NULL AND "messages"."queued_at" IS NULL AND "messages"."price_minor" IS NULL AND "messages"."currency" IS NULL AND "messages"."send_attempted_at" IS NULL AND "messages"."sent_at" IS NULL AND "messages"."delivered_at" IS NULL AND "messages"."failed_at" IS NULL AND "messages"."error_code" IS NULL AND "messages"."error_title" IS NULL AND "messages"."text_body" IS NULL AND "messages"."template_name" IS NULL AND "messages"."template_language" IS NULL AND "messages"."template_category" IS NULL AND "messages"."template_parameters" IS NULL));
