CREATE TABLE "consent_changes" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"portal_id" integer NOT NULL,
	"contact_id" text NOT NULL,
	"from_state" text NOT NULL,
	"to_state" text NOT NULL,
	"source" text NOT NULL,
	"message_id" text,
	"occurred_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "conversations" (
	"id" text NOT NULL,
	"portal_id" integer NOT NULL,
	"contact_id" text NOT NULL,
	"phone_number_id" text NOT NULL,
	"last_message_id" text NOT NULL,
	"last_message_at" timestamp (3) with time zone NOT NULL,
	"last_direction" text NOT NULL,
	"unread_count" integer DEFAULT 0 NOT NULL,
	"last_inbound_at" timestamp (3) with time zone,
	"window_closing_notified_at" timestamp (3) with time zone,
	CONSTRAINT "conversations_portal_id_contact_id_phone_number_id_pk" PRIMARY KEY("portal_id","contact_id","phone_number_id"),
	CONSTRAINT "conversations_id_unique" UNIQUE("id"),
	CONSTRAINT "conversations_unread_not_negative" CHECK ("conversations"."unread_count" >= 0)
);
--> statement-breakpoint
CREATE TABLE "inbound_messages" (
	"id" text PRIMARY KEY NOT NULL,
	"portal_id" integer NOT NULL,
	"contact_id" text,
	"from" text NOT NULL,
	"phone_number_id" text NOT NULL,
	"provider_message_id" text NOT NULL,
	"type" text NOT NULL,
	"content" jsonb,
	"media_id" text,
	"context_provider_message_id" text,
	"context_message_id" text,
	"received_at" timestamp (3) with time zone NOT NULL,
	"read_at" timestamp (3) with time zone,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "media" (
	"id" text PRIMARY KEY NOT NULL,
	"portal_id" integer NOT NULL,
	"message_id" text NOT NULL,
	"provider_media_id" text NOT NULL,
	"mime_type" text NOT NULL,
	"sha256" text,
	"file_size" integer,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "messaging_settings" (
	"portal_id" integer PRIMARY KEY NOT NULL,
	"opt_out_keywords" text[] NOT NULL,
	"opt_in_keywords" text[] NOT NULL,
	"opt_out_reply" text,
	"opt_in_reply" text,
	"auto_mark_read" boolean DEFAULT false NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "messages" ADD COLUMN "content" jsonb;--> statement-breakpoint
ALTER TABLE "consent_changes" ADD CONSTRAINT "consent_changes_portal_id_portals_id_fk" FOREIGN KEY ("portal_id") REFERENCES "public"."portals"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "consent_changes" ADD CONSTRAINT "consent_changes_contact_id_contacts_id_fk" FOREIGN KEY ("contact_id") REFERENCES "public"."contacts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "conversations" ADD CONSTRAINT "conversations_portal_id_portals_id_fk" FOREIGN KEY ("portal_id") REFERENCES "public"."portals"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "conversations" ADD CONSTRAINT "conversations_contact_id_contacts_id_fk" FOREIGN KEY ("contact_id") REFERENCES "public"."contacts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "inbound_messages" ADD CONSTRAINT "inbound_messages_portal_id_portals_id_fk" FOREIGN KEY ("portal_id") REFERENCES "public"."portals"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "inbound_messages" ADD CONSTRAINT "inbound_messages_contact_id_contacts_id_fk" FOREIGN KEY ("contact_id") REFERENCES "public"."contacts"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "media" ADD CONSTRAINT "media_portal_id_portals_id_fk" FOREIGN KEY ("portal_id") REFERENCES "public"."portals"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "messaging_settings" ADD CONSTRAINT "messaging_settings_portal_id_portals_id_fk" FOREIGN KEY ("portal_id") REFERENCES "public"."portals"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "consent_changes_contact" ON "consent_changes" USING btree ("portal_id","contact_id","occurred_at");--> statement-breakpoint
CREATE INDEX "conversations_portal_page" ON "conversations" USING btree ("portal_id","last_message_at","id");--> statement-breakpoint
CREATE INDEX "conversations_window" ON "conversations" USING btree ("last_inbound_at");--> statement-breakpoint
CREATE UNIQUE INDEX "inbound_messages_portal_wamid" ON "inbound_messages" USING btree ("portal_id","provider_message_id");--> statement-breakpoint
CREATE INDEX "inbound_messages_portal_page" ON "inbound_messages" USING btree ("portal_id","received_at","id");--> statement-breakpoint
CREATE INDEX "inbound_messages_portal_contact_page" ON "inbound_messages" USING btree ("portal_id","contact_id","received_at","id");--> statement-breakpoint
CREATE INDEX "inbound_messages_content_expiry" ON "inbound_messages" USING btree ("received_at") WHERE "inbound_messages"."content" IS NOT NULL;--> statement-breakpoint
CREATE UNIQUE INDEX "media_portal_provider_id" ON "media" USING btree ("portal_id","provider_media_id");