CREATE TABLE "processed_signed_requests" (
	"callback" text NOT NULL,
	"fingerprint" text NOT NULL,
	"provider_user_id" text NOT NULL,
	"confirmation_code" text,
	"processed_at" timestamp with time zone DEFAULT now() NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	CONSTRAINT "processed_signed_requests_callback_fingerprint_pk" PRIMARY KEY("callback","fingerprint")
);
--> statement-breakpoint
CREATE TABLE "contacts" (
	"id" text PRIMARY KEY NOT NULL,
	"portal_id" integer NOT NULL,
	"phone" text NOT NULL,
	"email" text,
	"first_name" text,
	"last_name" text,
	"attributes" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"tags" text[] DEFAULT '{}'::text[] NOT NULL,
	"consent_whatsapp" text DEFAULT 'unknown' NOT NULL,
	"consent_updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"consent_source" text DEFAULT 'api' NOT NULL,
	"last_inbound_at" timestamp (3) with time zone,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "sessions" ADD COLUMN "oauth_state_hash" text;--> statement-breakpoint
ALTER TABLE "contacts" ADD CONSTRAINT "contacts_portal_id_portals_id_fk" FOREIGN KEY ("portal_id") REFERENCES "public"."portals"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "processed_signed_requests_expiry" ON "processed_signed_requests" USING btree ("expires_at");--> statement-breakpoint
CREATE UNIQUE INDEX "contacts_portal_phone" ON "contacts" USING btree ("portal_id","phone" text_pattern_ops);--> statement-breakpoint
CREATE INDEX "contacts_portal_page" ON "contacts" USING btree ("portal_id","created_at","id");--> statement-breakpoint
CREATE INDEX "contacts_portal_consent_page" ON "contacts" USING btree ("portal_id","consent_whatsapp","created_at","id");--> statement-breakpoint
CREATE INDEX "contacts_portal_updated" ON "contacts" USING btree ("portal_id","updated_at");--> statement-breakpoint
CREATE INDEX "contacts_tags" ON "contacts" USING gin ("tags");--> statement-breakpoint
CREATE INDEX "contacts_portal_first_name" ON "contacts" USING btree ("portal_id",lower("first_name") text_pattern_ops);--> statement-breakpoint
CREATE INDEX "contacts_portal_last_name" ON "contacts" USING btree ("portal_id",lower("last_name") text_pattern_ops);--> statement-breakpoint
CREATE INDEX "contacts_portal_email" ON "contacts" USING btree ("portal_id",lower("email") text_pattern_ops);--> statement-breakpoint
CREATE UNIQUE INDEX "data_deletion_requests_open_per_user" ON "data_deletion_requests" USING btree ("provider_user_id") WHERE "data_deletion_requests"."completed_at" is null;