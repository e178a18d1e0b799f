CREATE TABLE "number_onboarding" (
	"id" text PRIMARY KEY NOT NULL,
	"portal_id" integer NOT NULL,
	"waba_id" text NOT NULL,
	"phone_number_id" text NOT NULL,
	"pin" jsonb NOT NULL,
	"webhooks_subscribed" boolean DEFAULT false NOT NULL,
	"registered" boolean DEFAULT false NOT NULL,
	"last_error" text,
	"next_attempt_at" timestamp with time zone,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "connections" ADD COLUMN "onboarding_owner" text;--> statement-breakpoint
ALTER TABLE "connections" ADD COLUMN "onboarding_until" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "number_onboarding" ADD CONSTRAINT "number_onboarding_portal_id_portals_id_fk" FOREIGN KEY ("portal_id") REFERENCES "public"."portals"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "number_onboarding_portal_number" ON "number_onboarding" USING btree ("portal_id","phone_number_id");--> statement-breakpoint
CREATE INDEX "number_onboarding_portal_waba" ON "number_onboarding" USING btree ("portal_id","waba_id");