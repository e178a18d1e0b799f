ALTER TABLE "webhook_events" ADD COLUMN "contact_id" text;--> statement-breakpoint
ALTER TABLE "webhook_events" ADD COLUMN "contact_phone" text;