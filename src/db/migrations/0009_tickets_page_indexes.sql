DROP INDEX "support_tickets_portal_page";--> statement-breakpoint
DROP INDEX "support_tickets_portal_status_page";--> statement-breakpoint
DROP INDEX "support_tickets_queue";--> statement-breakpoint
CREATE INDEX "support_tickets_portal_page" ON "support_tickets" USING btree ("portal_id","created_at","id");--> statement-breakpoint
CREATE INDEX "support_tickets_portal_status_page" ON "support_tickets" USING btree ("portal_id","status","created_at","id");--> statement-breakpoint
CREATE INDEX "support_tickets_queue" ON "support_tickets" USING btree ("created_at","id");