ALTER TABLE "messages" ADD COLUMN "delivery_due_at" timestamp (3) with time zone;--> statement-breakpoint
ALTER TABLE "messages" ADD COLUMN "delivery_attempts" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
CREATE INDEX "messages_delivery_due" ON "messages" USING btree ("delivery_due_at") WHERE "messages"."delivery_due_at" IS NOT NULL;--> statement-breakpoint
-- The messages that were waiting for a pg-boss `message.send` job become due in the new queue: every queued outbound message the provider has not accepted and no worker attempted.
UPDATE "messages" SET "delivery_due_at" = "queued_at" WHERE "direction" = 'outbound' AND "status" = 'queued' AND "provider_message_id" IS NULL AND "send_attempted_at" IS NULL;
