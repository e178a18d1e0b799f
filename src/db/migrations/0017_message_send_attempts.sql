ALTER TABLE "messages" ADD COLUMN "send_attempted_at" timestamp (3) with time zone;--> statement-breakpoint
CREATE INDEX "messages_queued_attempts" ON "messages" USING btree ("send_attempted_at") WHERE "messages"."status" = 'queued';--> statement-breakpoint
-- A queued message the provider already accepted waits for its statuses from the time it was queued.
UPDATE "messages" SET "send_attempted_at" = "queued_at" WHERE "status" = 'queued' AND "provider_message_id" IS NOT NULL;
