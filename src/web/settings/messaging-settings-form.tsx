/** @jsxRuntime automatic */
/** @jsxImportSource preact */
/**
 * The "Messaging" section of `/settings`: the opt-out and opt-in keywords, their confirmation
 * replies and marking read on open. A form for an administrator, the values as facts for
 * everyone else.
 *
 * @see docs/messaging.md "Opt-out keywords"
 */
import { Button, Card, Field } from '../../browser/kit.tsx';
import {
  KEYWORD_MAX,
  KEYWORDS_MAX,
  REPLY_MAX,
  type MessagingSettings,
  type MessagingSettingsInput,
} from '../../messaging/conversations/messaging-settings.ts';

/** The form as typed, and the error of each field that has one (a form sent back). */
export interface MessagingSettingsForm {
  values: MessagingSettingsInput;
  errors: Partial<Record<keyof MessagingSettingsInput, string>>;
}

export interface MessagingSettingsSectionProps {
  settings: MessagingSettings;
  /** Present when a POST came back with errors: what was typed, never the stored values. */
  form?: MessagingSettingsForm | undefined;
  canChange: boolean;
  csrfToken: string;
}

/** The stored settings as the form's values. */
export function formValues(s: MessagingSettings): MessagingSettingsInput {
  return {
    optOutKeywords: s.optOutKeywords.join(', '),
    optInKeywords: s.optInKeywords.join(', '),
    optOutReply: s.optOutReply ?? '',
    optInReply: s.optInReply ?? '',
    autoMarkRead: s.autoMarkRead,
  };
}

const KEYWORD_HELP = `Separated by commas or spaces; at most ${KEYWORDS_MAX}, each at most ${KEYWORD_MAX} characters. A message that is exactly one of them (any case) counts.`;

function Facts({ s }: { s: MessagingSettings }) {
  return (
    <>
      <dl class="facts" data-testid="messaging-settings">
        <dt>Opt-out keywords</dt>
        <dd>{s.optOutKeywords.join(', ') || 'None'}</dd>
        <dt>Opt-in keywords</dt>
        <dd>{s.optInKeywords.join(', ') || 'None'}</dd>
        <dt>Opt-out confirmation reply</dt>
        <dd>{s.optOutReply ?? 'None'}</dd>
        <dt>Opt-in confirmation reply</dt>
        <dd>{s.optInReply ?? 'None'}</dd>
        <dt>Mark read on open</dt>
        <dd>{s.autoMarkRead ? 'Yes' : 'No'}</dd>
      </dl>
      <p class="muted">Only an administrator can change the messaging settings.</p>
    </>
  );
}

/** The section: a form (an administrator) or the settings as facts. */
export function MessagingSettingsSection(p: MessagingSettingsSectionProps) {
  if (!p.canChange) {
    return (
      <Card title="Messaging" id="messaging">
        <Facts s={p.settings} />
      </Card>
    );
  }
  const v = p.form?.values ?? formValues(p.settings);
  const e = p.form?.errors ?? {};
  return (
    <Card title="Messaging" id="messaging">
      <form method="post" action="/settings/messaging" data-testid="messaging-form">
        <input type="hidden" name="csrf" value={p.csrfToken} />
        <Field
          name="optOutKeywords"
          label="Opt-out keywords"
          value={v.optOutKeywords}
          error={e.optOutKeywords}
          help={`${KEYWORD_HELP} Sets the contact's consent to opted out.`}
        />
        <Field
          name="optInKeywords"
          label="Opt-in keywords"
          value={v.optInKeywords}
          error={e.optInKeywords}
          help="Sets the contact's consent to opted in; never also an opt-out keyword."
        />
        <Field
          name="optOutReply"
          label="Opt-out confirmation reply"
          rows={3}
          maxLength={REPLY_MAX}
          value={v.optOutReply}
          error={e.optOutReply}
          help="Sent once after an opt-out keyword changed the consent; empty: no reply."
        />
        <Field
          name="optInReply"
          label="Opt-in confirmation reply"
          rows={3}
          maxLength={REPLY_MAX}
          value={v.optInReply}
          error={e.optInReply}
          help="Sent once after an opt-in keyword changed the consent; empty: no reply."
        />
        <div class="field">
          <label class="check">
            <input
              type="checkbox"
              name="autoMarkRead"
              value="yes"
              checked={v.autoMarkRead}
              aria-describedby="f-autoMarkRead-help"
            />{' '}
            Mark read on open
          </label>
          <p class="help" id="f-autoMarkRead-help">
            Opening a conversation in the inbox marks its newest message read at the provider (the
            sender sees blue ticks).
          </p>
        </div>
        <Button testid="messaging-save">Save messaging settings</Button>
      </form>
    </Card>
  );
}
