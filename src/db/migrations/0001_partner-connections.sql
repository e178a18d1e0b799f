CREATE TABLE "connections" (
	"portal_id" integer PRIMARY KEY NOT NULL,
	"status" text NOT NULL,
	"provider_user_id" text,
	"asset_ids" text[] DEFAULT '{}'::text[] NOT NULL,
	"granted_permissions" text[] DEFAULT '{}'::text[] NOT NULL,
	"token_ciphertext" text,
	"token_iv" text,
	"token_tag" text,
	"key_id" text,
	"token_expires_at" timestamp with time zone,
	"connected_at" timestamp with time zone DEFAULT now() NOT NULL,
	"connected_by" integer,
	"last_checked_at" timestamp with time zone,
	"check_lease_owner" text,
	"check_lease_until" timestamp with time zone,
	"revoked_at" timestamp with time zone,
	"revoke_reason" text
);
--> statement-breakpoint
CREATE TABLE "data_deletion_requests" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "data_deletion_requests_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"confirmation_code" text NOT NULL,
	"provider_user_id" text NOT NULL,
	"connections_deleted" integer NOT NULL,
	"summary" text NOT NULL,
	"requested_at" timestamp with time zone DEFAULT now() NOT NULL,
	"completed_at" timestamp with time zone,
	CONSTRAINT "data_deletion_requests_confirmation_code_unique" UNIQUE("confirmation_code")
);
--> statement-breakpoint
ALTER TABLE "connections" ADD CONSTRAINT "connections_portal_id_portals_id_fk" FOREIGN KEY ("portal_id") REFERENCES "public"."portals"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "connections" ADD CONSTRAINT "connections_connected_by_users_id_fk" FOREIGN KEY ("connected_by") REFERENCES "public"."users"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "connections_provider_user" ON "connections" USING btree ("provider_user_id");--> statement-breakpoint
CREATE INDEX "connections_status_checked" ON "connections" USING btree ("status","last_checked_at");