-- One shape for every sealed value: the provider token and the webhook signing secrets move from
-- four text columns (ciphertext, iv, tag, key id) into one jsonb `SealedValue`
-- (`{ciphertext, iv, tag, keyId}`), as every other sealed column holds it. The same ciphertext,
-- IV, tag and key id, repacked: no key is needed and every value opens as before.
ALTER TABLE "connections" ADD COLUMN "token" jsonb;--> statement-breakpoint
ALTER TABLE "webhook_endpoints" ADD COLUMN "secret" jsonb;--> statement-breakpoint
ALTER TABLE "webhook_endpoints" ADD COLUMN "previous_secret" jsonb;--> statement-breakpoint
UPDATE "connections" SET "token" = jsonb_build_object('ciphertext', "token_ciphertext",
  'iv', "token_iv", 'tag', "token_tag", 'keyId', "key_id")
WHERE "token_ciphertext" IS NOT NULL AND "token_iv" IS NOT NULL AND "token_tag" IS NOT NULL
  AND "key_id" IS NOT NULL;--> statement-breakpoint
UPDATE "webhook_endpoints" SET "secret" = jsonb_build_object('ciphertext', "secret_ciphertext",
  'iv', "secret_iv", 'tag', "secret_tag", 'keyId', "secret_key_id");--> statement-breakpoint
UPDATE "webhook_endpoints" SET "previous_secret" = jsonb_build_object(
  'ciphertext', "previous_secret_ciphertext", 'iv', "previous_secret_iv",
  'tag', "previous_secret_tag", 'keyId', "previous_secret_key_id")
WHERE "previous_secret_ciphertext" IS NOT NULL AND "previous_secret_iv" IS NOT NULL
  AND "previous_secret_tag" IS NOT NULL AND "previous_secret_key_id" IS NOT NULL;--> statement-breakpoint
ALTER TABLE "webhook_endpoints" ALTER COLUMN "secret" SET NOT NULL;--> statement-breakpoint
ALTER TABLE "connections" DROP COLUMN "token_ciphertext";--> statement-breakpoint
ALTER TABLE "connections" DROP COLUMN "token_iv";--> statement-breakpoint
ALTER TABLE "connections" DROP COLUMN "token_tag";--> statement-breakpoint
ALTER TABLE "connections" DROP COLUMN "key_id";--> statement-breakpoint
ALTER TABLE "webhook_endpoints" DROP COLUMN "secret_ciphertext";--> statement-breakpoint
ALTER TABLE "webhook_endpoints" DROP COLUMN "secret_iv";--> statement-breakpoint
ALTER TABLE "webhook_endpoints" DROP COLUMN "secret_tag";--> statement-breakpoint
ALTER TABLE "webhook_endpoints" DROP COLUMN "secret_key_id";--> statement-breakpoint
ALTER TABLE "webhook_endpoints" DROP COLUMN "previous_secret_ciphertext";--> statement-breakpoint
ALTER TABLE "webhook_endpoints" DROP COLUMN "previous_secret_iv";--> statement-breakpoint
ALTER TABLE "webhook_endpoints" DROP COLUMN "previous_secret_tag";--> statement-breakpoint
ALTER TABLE "webhook_endpoints" DROP COLUMN "previous_secret_key_id";
