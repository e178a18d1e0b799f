CREATE TABLE "api_key_usage" (
	"key_id" integer NOT NULL,
	"day" date NOT NULL,
	"operation" text NOT NULL,
	"status_class" text NOT NULL,
	"requests" integer DEFAULT 0 NOT NULL,
	CONSTRAINT "api_key_usage_key_id_day_operation_status_class_pk" PRIMARY KEY("key_id","day","operation","status_class")
);
--> statement-breakpoint
ALTER TABLE "api_tokens" DROP CONSTRAINT "api_tokens_portal_id_unique";--> statement-breakpoint
ALTER TABLE "api_tokens" ADD COLUMN "name" text DEFAULT 'Default' NOT NULL;--> statement-breakpoint
ALTER TABLE "api_tokens" ADD COLUMN "expires_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "api_tokens" ADD COLUMN "allowed_ips" text[];--> statement-breakpoint
ALTER TABLE "api_tokens" ADD COLUMN "rate_limit_per_minute" integer;--> statement-breakpoint
ALTER TABLE "api_tokens" ADD COLUMN "previous_token_hash" text;--> statement-breakpoint
ALTER TABLE "api_tokens" ADD COLUMN "previous_valid_until" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "api_tokens" ADD COLUMN "last_used_ip" text;--> statement-breakpoint
ALTER TABLE "api_key_usage" ADD CONSTRAINT "api_key_usage_key_id_api_tokens_id_fk" FOREIGN KEY ("key_id") REFERENCES "public"."api_tokens"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "api_tokens_portal_id_idx" ON "api_tokens" USING btree ("portal_id","id");--> statement-breakpoint
ALTER TABLE "api_tokens" ADD CONSTRAINT "api_tokens_previous_token_hash_unique" UNIQUE("previous_token_hash");