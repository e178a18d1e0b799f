ALTER TABLE "contacts" ALTER COLUMN "phone" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "contacts" ADD COLUMN "wa_user_id" text;--> statement-breakpoint
ALTER TABLE "contacts" ADD COLUMN "parent_wa_user_id" text;--> statement-breakpoint
ALTER TABLE "contacts" ADD COLUMN "username" text;--> statement-breakpoint
ALTER TABLE "contacts" ADD COLUMN "profile_name" text;--> statement-breakpoint
CREATE UNIQUE INDEX "contacts_portal_wa_user_id" ON "contacts" USING btree ("portal_id","wa_user_id");--> statement-breakpoint
ALTER TABLE "contacts" ADD CONSTRAINT "contacts_phone_or_wa_user_id" CHECK ("contacts"."phone" is not null or "contacts"."wa_user_id" is not null);