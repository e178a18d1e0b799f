/**
 * The sample templates of a development sandbox (CloudOptions `sampleTemplates`): templates
 * whose header is a medium and whose button takes a suffix, for trying rich template sends.
 * Apart from the sandbox's state so that the state can seed them (and import nothing back).
 */
import { randomInt } from 'node:crypto';

/** A sample template: its definition as Graph lists it. */
export interface SampleTemplate {
  name: string;
  language: string;
  category: 'MARKETING' | 'UTILITY' | 'AUTHENTICATION';
  components: Record<string, unknown>[];
}

/**
 * The rich sample templates a development sandbox's WABAs also start with (CloudOptions
 * `sampleTemplates`), APPROVED, as Graph lists them: `order_picture` (MARKETING: an IMAGE
 * header, a body variable, a URL button whose url ends in `{{1}}`) and `invoice_document`
 * (UTILITY: a DOCUMENT header and a body variable).
 *
 * @see https://developers.facebook.com/docs/whatsapp/business-management-api/message-templates/components
 */
export const SAMPLE_TEMPLATES: readonly SampleTemplate[] = [
  {
    name: 'order_picture',
    language: 'en_US',
    category: 'MARKETING',
    components: [
      {
        type: 'HEADER',
        format: 'IMAGE',
        example: { header_handle: ['https://example.com/parcel.jpg'] },
      },
      {
        type: 'BODY',
        text: 'Hi {{1}}, your order is packed. Here it is before it leaves.',
        example: { body_text: [['Ada']] },
      },
      {
        type: 'BUTTONS',
        buttons: [
          {
            type: 'URL',
            text: 'Track it',
            url: 'https://track.example.com/{{1}}',
            example: ['https://track.example.com/ABC123'],
          },
        ],
      },
    ],
  },
  {
    name: 'invoice_document',
    language: 'en_US',
    category: 'UTILITY',
    components: [
      {
        type: 'HEADER',
        format: 'DOCUMENT',
        example: { header_handle: ['https://example.com/invoice.pdf'] },
      },
      {
        type: 'BODY',
        text: 'Your invoice {{1}} is attached.',
        example: { body_text: [['INV-0042']] },
      },
    ],
  },
];

/** The sample templates as a new WABA's, APPROVED, each with a new Graph id. */
export function sampleTemplates(): (SampleTemplate & {
  id: string;
  status: 'APPROVED';
  appId: undefined;
})[] {
  return SAMPLE_TEMPLATES.map((t) => ({
    id: `${randomInt(100_000_000, 999_999_999)}${randomInt(100_000, 999_999)}`,
    ...structuredClone(t),
    status: 'APPROVED',
    appId: undefined,
  }));
}
