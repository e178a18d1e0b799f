ALTER TABLE "messages" ADD COLUMN "pricing_billable" boolean;--> statement-breakpoint
ALTER TABLE "messages" ADD COLUMN "pricing_model" text;--> statement-breakpoint
ALTER TABLE "messages" ADD COLUMN "pricing_type" text;--> statement-breakpoint
ALTER TABLE "messages" ADD COLUMN "pricing_category" text;--> statement-breakpoint
ALTER TABLE "messages" ADD COLUMN "charged_minor" integer;--> statement-breakpoint
ALTER TABLE "messages" ADD CONSTRAINT "messages_charged_not_negative" CHECK ("messages"."charged_minor" >= 0);--> statement-breakpoint
-- Messages settled before this column: charged what the ledger captured for them (0 when it
-- released their reservation); queued ones stay null until settled.
UPDATE "messages" m SET "charged_minor" = coalesce((
  SELECT sum(CASE WHEN t."kind" = 'capture' THEN t."amount" ELSE 0 END)
  FROM "credit_transactions" t WHERE t."message_id" = m."id"), 0)
WHERE m."direction" = 'outbound' AND m."status" <> 'queued';
