CREATE TABLE "messages" (
	"id" text PRIMARY KEY NOT NULL,
	"portal_id" integer NOT NULL,
	"contact_id" text,
	"to" text NOT NULL,
	"from" text NOT NULL,
	"type" text NOT NULL,
	"text_body" text,
	"template_name" text,
	"template_language" text,
	"template_category" text,
	"template_parameters" jsonb,
	"status" text DEFAULT 'queued' NOT NULL,
	"provider_message_id" text,
	"queued_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"sent_at" timestamp (3) with time zone,
	"delivered_at" timestamp (3) with time zone,
	"read_at" timestamp (3) with time zone,
	"failed_at" timestamp (3) with time zone,
	"error_code" text,
	"error_title" text,
	"price_minor" integer NOT NULL,
	"currency" text NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "messages_price_not_negative" CHECK ("messages"."price_minor" >= 0)
);
--> statement-breakpoint
CREATE TABLE "credit_accounts" (
	"portal_id" integer PRIMARY KEY NOT NULL,
	"balance" bigint DEFAULT 0 NOT NULL,
	"reserved" bigint DEFAULT 0 NOT NULL,
	"currency" text NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "credit_reserved_not_negative" CHECK ("credit_accounts"."reserved" >= 0),
	CONSTRAINT "credit_reserved_within_balance" CHECK ("credit_accounts"."reserved" <= "credit_accounts"."balance")
);
--> statement-breakpoint
CREATE TABLE "credit_transactions" (
	"id" text PRIMARY KEY NOT NULL,
	"portal_id" integer NOT NULL,
	"kind" text NOT NULL,
	"amount" bigint NOT NULL,
	"currency" text NOT NULL,
	"message_id" text,
	"note" text,
	"actor" text NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "credit_transactions_amount_positive" CHECK ("credit_transactions"."amount" > 0)
);
--> statement-breakpoint
ALTER TABLE "messages" ADD CONSTRAINT "messages_portal_id_portals_id_fk" FOREIGN KEY ("portal_id") REFERENCES "public"."portals"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "messages" ADD CONSTRAINT "messages_contact_id_contacts_id_fk" FOREIGN KEY ("contact_id") REFERENCES "public"."contacts"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "credit_accounts" ADD CONSTRAINT "credit_accounts_portal_id_portals_id_fk" FOREIGN KEY ("portal_id") REFERENCES "public"."portals"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "credit_transactions" ADD CONSTRAINT "credit_transactions_portal_id_portals_id_fk" FOREIGN KEY ("portal_id") REFERENCES "public"."portals"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "messages_portal_wamid" ON "messages" USING btree ("portal_id","provider_message_id");--> statement-breakpoint
CREATE INDEX "messages_portal_page" ON "messages" USING btree ("portal_id","created_at","id");--> statement-breakpoint
CREATE INDEX "messages_portal_status_page" ON "messages" USING btree ("portal_id","status","created_at","id");--> statement-breakpoint
CREATE INDEX "messages_portal_to_page" ON "messages" USING btree ("portal_id","to","created_at","id");--> statement-breakpoint
CREATE INDEX "credit_transactions_portal_page" ON "credit_transactions" USING btree ("portal_id","created_at","id");--> statement-breakpoint
CREATE INDEX "credit_transactions_message" ON "credit_transactions" USING btree ("message_id");