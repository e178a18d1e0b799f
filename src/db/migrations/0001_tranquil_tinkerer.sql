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
CREATE INDEX "processed_signed_requests_expiry" ON "processed_signed_requests" USING btree ("expires_at");--> statement-breakpoint
CREATE UNIQUE INDEX "data_deletion_requests_open_per_user" ON "data_deletion_requests" USING btree ("provider_user_id") WHERE "data_deletion_requests"."completed_at" is null;