/**
 * A provider webhook sink that records what the receiver hands it: messaging's stand-in in the
 * partner tests (the receiver's own behaviour is under test, not a sink's).
 */
import type {
  InboundMessageEvent,
  MessageStatusEvent,
  PhoneNumberQualityEvent,
  ProviderWebhookSink,
  TemplateQualityEvent,
  TemplateStatusEvent,
} from '../../src/partner/cloud-api/provider-webhook-events.ts';

export type Recorded =
  | { kind: 'statuses'; portalId: number; phoneNumberId: string; events: MessageStatusEvent[] }
  | { kind: 'inbound'; portalId: number; phoneNumberId: string; events: InboundMessageEvent[] }
  | { kind: 'template'; portalId: number; event: TemplateStatusEvent }
  | { kind: 'phone_quality'; portalId: number; event: PhoneNumberQualityEvent }
  | { kind: 'template_quality'; portalId: number; event: TemplateQualityEvent };

/** A sink that keeps what it is given (messaging's stand-in in these tests). */
export function recordingSink(): { sink: ProviderWebhookSink; recorded: Recorded[] } {
  const recorded: Recorded[] = [];
  return {
    recorded,
    sink: {
      messageStatuses: async (portalId, phoneNumberId, events) =>
        void recorded.push({ kind: 'statuses', portalId, phoneNumberId, events }),
      inboundMessages: async (portalId, phoneNumberId, events) =>
        void recorded.push({ kind: 'inbound', portalId, phoneNumberId, events }),
      templateStatusUpdated: async (portalId, event) =>
        void recorded.push({ kind: 'template', portalId, event }),
      phoneNumberQualityUpdated: async (portalId, event) =>
        void recorded.push({ kind: 'phone_quality', portalId, event }),
      templateQualityUpdated: async (portalId, event) =>
        void recorded.push({ kind: 'template_quality', portalId, event }),
    },
  };
}
