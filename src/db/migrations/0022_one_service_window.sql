-- The service window's one stored truth is conversations.last_inbound_at (decision 0049): each
-- service_windows row is carried into its conversation, forward only.
UPDATE "conversations" AS c SET "last_inbound_at" = sw."last_inbound_at"
FROM "service_windows" AS sw
WHERE c."portal_id" = sw."portal_id" AND c."contact_id" = sw."contact_id"
  AND c."phone_number_id" = sw."phone_number_id"
  AND (c."last_inbound_at" IS NULL OR c."last_inbound_at" < sw."last_inbound_at");--> statement-breakpoint
-- A window without its conversation gets one, made from the newest inbound message of the pair
-- (unread: its inbound messages not read, reactions aside, as the inbound statement counts).
INSERT INTO "conversations" ("id", "portal_id", "contact_id", "phone_number_id", "last_message_id",
  "last_message_at", "last_direction", "unread_count", "last_inbound_at")
SELECT 'cnv_' || replace(gen_random_uuid()::text, '-', ''), sw."portal_id", sw."contact_id",
  sw."phone_number_id", m."id", m."received_at", 'inbound',
  (SELECT count(*) FROM "inbound_messages" AS u
    WHERE u."portal_id" = sw."portal_id" AND u."contact_id" = sw."contact_id"
      AND u."phone_number_id" = sw."phone_number_id" AND u."read_at" IS NULL
      AND u."type" <> 'reaction')::int,
  sw."last_inbound_at"
FROM "service_windows" AS sw
CROSS JOIN LATERAL (
  SELECT i."id", i."received_at" FROM "inbound_messages" AS i
  WHERE i."portal_id" = sw."portal_id" AND i."contact_id" = sw."contact_id"
    AND i."phone_number_id" = sw."phone_number_id"
  ORDER BY i."received_at" DESC, i."id" DESC LIMIT 1) AS m
WHERE NOT EXISTS (
  SELECT 1 FROM "conversations" AS c
  WHERE c."portal_id" = sw."portal_id" AND c."contact_id" = sw."contact_id"
    AND c."phone_number_id" = sw."phone_number_id");--> statement-breakpoint
DROP TABLE "service_windows" CASCADE;
