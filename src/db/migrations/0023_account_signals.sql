CREATE TABLE "account_signals" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"portal_id" integer NOT NULL,
	"waba_id" text NOT NULL,
	"field" text NOT NULL,
	"event" text NOT NULL,
	"severity" text NOT NULL,
	"summary" text NOT NULL,
	"details" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"occurred_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"expires_at" timestamp (3) with time zone
);
--> statement-breakpoint
CREATE TABLE "marketing_preferences" (
	"portal_id" integer NOT NULL,
	"contact_id" text NOT NULL,
	"phone_number_id" text NOT NULL,
	"stopped" boolean NOT NULL,
	"changed_at" timestamp (3) with time zone NOT NULL,
	CONSTRAINT "marketing_preferences_portal_id_contact_id_phone_number_id_pk" PRIMARY KEY("portal_id","contact_id","phone_number_id")
);
--> statement-breakpoint
CREATE TABLE "template_categories" (
	"portal_id" integer NOT NULL,
	"template_id" text NOT NULL,
	"waba_id" text NOT NULL,
	"category" text NOT NULL,
	"previous_category" text,
	"effective_at" timestamp (3) with time zone NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "template_categories_portal_id_template_id_pk" PRIMARY KEY("portal_id","template_id")
);
--> statement-breakpoint
ALTER TABLE "consent_changes" ADD COLUMN "scope" text DEFAULT 'whatsapp' NOT NULL;--> statement-breakpoint
ALTER TABLE "consent_changes" ADD COLUMN "phone_number_id" text;--> statement-breakpoint
ALTER TABLE "account_signals" ADD CONSTRAINT "account_signals_portal_id_portals_id_fk" FOREIGN KEY ("portal_id") REFERENCES "public"."portals"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "marketing_preferences" ADD CONSTRAINT "marketing_preferences_portal_id_portals_id_fk" FOREIGN KEY ("portal_id") REFERENCES "public"."portals"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "marketing_preferences" ADD CONSTRAINT "marketing_preferences_contact_id_contacts_id_fk" FOREIGN KEY ("contact_id") REFERENCES "public"."contacts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "template_categories" ADD CONSTRAINT "template_categories_portal_id_portals_id_fk" FOREIGN KEY ("portal_id") REFERENCES "public"."portals"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "account_signals_portal" ON "account_signals" USING btree ("portal_id","occurred_at");