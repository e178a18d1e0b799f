CREATE TABLE "credit_leases" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "credit_leases_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"portal_id" integer NOT NULL,
	"holder" text NOT NULL,
	"amount" bigint NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "credit_leases_amount_positive" CHECK ("credit_leases"."amount" > 0)
);
--> statement-breakpoint
ALTER TABLE "credit_transactions" ADD COLUMN "lease_id" bigint;--> statement-breakpoint
ALTER TABLE "credit_transactions" ADD COLUMN "posted" boolean DEFAULT true NOT NULL;--> statement-breakpoint
ALTER TABLE "credit_leases" ADD CONSTRAINT "credit_leases_portal_id_portals_id_fk" FOREIGN KEY ("portal_id") REFERENCES "public"."portals"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "credit_leases_portal" ON "credit_leases" USING btree ("portal_id");--> statement-breakpoint
CREATE INDEX "credit_transactions_lease" ON "credit_transactions" USING btree ("lease_id") WHERE "credit_transactions"."lease_id" is not null;--> statement-breakpoint
CREATE INDEX "credit_transactions_unposted" ON "credit_transactions" USING btree ("portal_id") WHERE not "credit_transactions"."posted";