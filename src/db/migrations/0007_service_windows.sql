CREATE TABLE "service_windows" (
	"portal_id" integer NOT NULL,
	"contact_id" text NOT NULL,
	"phone_number_id" text NOT NULL,
	"last_inbound_at" timestamp (3) with time zone NOT NULL,
	CONSTRAINT "service_windows_contact_id_phone_number_id_pk" PRIMARY KEY("contact_id","phone_number_id")
);
--> statement-breakpoint
ALTER TABLE "service_windows" ADD CONSTRAINT "service_windows_portal_id_portals_id_fk" FOREIGN KEY ("portal_id") REFERENCES "public"."portals"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "service_windows" ADD CONSTRAINT "service_windows_contact_id_contacts_id_fk" FOREIGN KEY ("contact_id") REFERENCES "public"."contacts"("id") ON DELETE cascade ON UPDATE no action;