ALTER TABLE "connections" ADD COLUMN "granted_assets" jsonb DEFAULT '{}'::jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "connections" ADD COLUMN "waba_ids" text[] DEFAULT '{}'::text[] NOT NULL;--> statement-breakpoint
CREATE INDEX "connections_waba_ids" ON "connections" USING gin ("waba_ids");