ALTER TABLE "media" ALTER COLUMN "message_id" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "media" ADD COLUMN "direction" text DEFAULT 'inbound' NOT NULL;--> statement-breakpoint
ALTER TABLE "media" ADD COLUMN "kind" text;--> statement-breakpoint
ALTER TABLE "media" ADD COLUMN "file_name" jsonb;--> statement-breakpoint
ALTER TABLE "media" ADD COLUMN "phone_number_id" text;--> statement-breakpoint
ALTER TABLE "media" ADD COLUMN "expires_at" timestamp (3) with time zone;--> statement-breakpoint
ALTER TABLE "media" ADD CONSTRAINT "media_outbound_complete" CHECK ("media"."direction" = 'inbound' OR ("media"."kind" IS NOT NULL AND "media"."file_size" IS NOT NULL AND "media"."phone_number_id" IS NOT NULL AND "media"."expires_at" IS NOT NULL));--> statement-breakpoint
ALTER TABLE "media" ADD CONSTRAINT "media_inbound_message" CHECK ("media"."direction" = 'outbound' OR "media"."message_id" IS NOT NULL);