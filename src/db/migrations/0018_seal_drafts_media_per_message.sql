DROP INDEX "media_portal_provider_id";--> statement-breakpoint
ALTER TABLE "message_drafts" ALTER COLUMN "message" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "message_drafts" ALTER COLUMN "recipients" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "message_drafts" ADD COLUMN "content" jsonb;--> statement-breakpoint
CREATE INDEX "media_portal_message" ON "media" USING btree ("portal_id","message_id");--> statement-breakpoint
CREATE UNIQUE INDEX "media_portal_provider_id" ON "media" USING btree ("portal_id","provider_media_id") WHERE "media"."direction" = 'outbound';