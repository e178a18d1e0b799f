CREATE TABLE "campaign_recipients" (
	"campaign_id" text NOT NULL,
	"seq" integer NOT NULL,
	"portal_id" integer NOT NULL,
	"contact_id" text,
	"state" text NOT NULL,
	"skip_reason" text,
	"error_code" text,
	"message_id" text,
	"claimed_at" timestamp (3) with time zone,
	CONSTRAINT "campaign_recipients_campaign_id_seq_pk" PRIMARY KEY("campaign_id","seq")
);
--> statement-breakpoint
CREATE TABLE "campaigns" (
	"id" text PRIMARY KEY NOT NULL,
	"portal_id" integer NOT NULL,
	"name" text NOT NULL,
	"from_phone_number_id" text NOT NULL,
	"template_name" text NOT NULL,
	"template_language" text NOT NULL,
	"content" jsonb NOT NULL,
	"audience" jsonb NOT NULL,
	"schedule_at" timestamp (3) with time zone,
	"pace_per_second" integer NOT NULL,
	"status" text DEFAULT 'draft' NOT NULL,
	"status_reason" text,
	"category" text,
	"estimated_cost_minor" bigint,
	"currency" text,
	"recipients" integer DEFAULT 0 NOT NULL,
	"skipped" integer DEFAULT 0 NOT NULL,
	"skipped_by" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"resolved_at" timestamp (3) with time zone,
	"resolving_since" timestamp (3) with time zone,
	"next_batch_at" timestamp (3) with time zone,
	"started_at" timestamp (3) with time zone,
	"finished_at" timestamp (3) with time zone,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "campaign_recipients" ADD CONSTRAINT "campaign_recipients_campaign_id_campaigns_id_fk" FOREIGN KEY ("campaign_id") REFERENCES "public"."campaigns"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "campaign_recipients" ADD CONSTRAINT "campaign_recipients_contact_id_contacts_id_fk" FOREIGN KEY ("contact_id") REFERENCES "public"."contacts"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "campaigns" ADD CONSTRAINT "campaigns_portal_id_portals_id_fk" FOREIGN KEY ("portal_id") REFERENCES "public"."portals"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "campaign_recipients_pending" ON "campaign_recipients" USING btree ("campaign_id","state","seq");--> statement-breakpoint
CREATE INDEX "campaign_recipients_contact" ON "campaign_recipients" USING btree ("contact_id");--> statement-breakpoint
CREATE INDEX "campaign_recipients_message" ON "campaign_recipients" USING btree ("message_id");--> statement-breakpoint
CREATE INDEX "campaigns_portal_page" ON "campaigns" USING btree ("portal_id","created_at","id");--> statement-breakpoint
CREATE INDEX "campaigns_runnable" ON "campaigns" USING btree ("status","next_batch_at");