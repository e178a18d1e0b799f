/** @jsxRuntime automatic */
/** @jsxImportSource preact */
/**
 * `/settings/team` on the page kit: the portal's members (email, role, status, availability),
 * the signed-in member's availability switch, and for an administrator the invitation form (its
 * one-time link shown once after), each member's role, and the confirmation steps of disabling
 * and removing a member.
 *
 * @see docs/how-to/work-the-inbox-as-a-team.md
 */
import type { Member } from '../../../accounts/team-service.ts';
import { ErrorFlash, Flash, type FlashCounts, type FlashKey } from '../../../browser/flash.tsx';
import {
  Actions,
  Badge,
  Button,
  ButtonLink,
  Card,
  ConfirmStep,
  DataTable,
  Field,
  PageHeader,
  PostButton,
  type Tone,
} from '../../../browser/kit.tsx';
import { Layout } from '../../../browser/layout.tsx';

/** The invite form as typed. */
export interface InviteForm {
  email: string;
  role: string;
}

export interface TeamPageProps {
  email: string;
  csrfToken: string;
  userId: number;
  isAdmin: boolean;
  availability: 'available' | 'away';
  members: Member[];
  /** The link of the invitation just made: shown once. */
  newInvitation?: { email: string; link: string; expiresAt: string } | undefined;
  flash?: { key: FlashKey; counts: FlashCounts } | null | undefined;
  error?: string | undefined;
  form?: InviteForm | undefined;
}

const ROLE_OPTIONS = [
  { value: 'agent', label: 'Agent: the inbox and contacts' },
  { value: 'admin', label: 'Administrator: everything, the team included' },
];

const STATUS_TONE: Record<Member['status'], Tone> = {
  active: 'ok',
  invited: 'info',
  disabled: 'bad',
};

const day = (iso: string) => `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`;

function roleWords(m: Member): string {
  if (m.isMainAdmin) return 'Main administrator';
  return m.role === 'admin' ? 'Administrator' : 'Agent';
}

/** An administrator's actions on one member (none on themselves but the availability). */
function MemberActions({ p, m }: { p: TeamPageProps; m: Member }) {
  if (!p.isAdmin || m.userId === p.userId || m.isMainAdmin) return null;
  const base = `/settings/team/${m.userId}`;
  return (
    <div class="row-actions">
      <form method="post" action={`${base}/role`}>
        <input type="hidden" name="csrf" value={p.csrfToken} />
        <input type="hidden" name="role" value={m.role === 'admin' ? 'agent' : 'admin'} />
        <Button kind="secondary">{m.role === 'admin' ? 'Make agent' : 'Make administrator'}</Button>
      </form>
      {m.status === 'disabled' ? (
        <PostButton action={`${base}/enable`} csrf={p.csrfToken}>
          Enable
        </PostButton>
      ) : (
        <ButtonLink href={`${base}/disable`} kind="secondary" testid={`disable-${m.userId}`}>
          Disable
        </ButtonLink>
      )}
      <ButtonLink href={`${base}/remove`} kind="danger" testid={`remove-${m.userId}`}>
        Remove
      </ButtonLink>
    </div>
  );
}

function MembersTable({ p }: { p: TeamPageProps }) {
  return (
    <DataTable
      testid="members"
      rows={p.members}
      rowKey={(m) => String(m.userId)}
      rowId={(m) => `member-${m.userId}`}
      columns={[
        { label: 'Email', kind: 'long', cell: (m) => m.email },
        { label: 'Role', cell: roleWords },
        {
          label: 'Status',
          kind: 'long',
          cell: (m) => (
            <>
              <Badge tone={STATUS_TONE[m.status]} testid={`status-${m.userId}`}>
                {m.status}
              </Badge>
              {m.status === 'invited' && m.invitationExpiresAt && (
                <span class="muted"> link until {day(m.invitationExpiresAt)}</span>
              )}
            </>
          ),
        },
        { label: 'Availability', cell: (m) => m.availability },
        ...(p.isAdmin
          ? [
              {
                label: 'Actions',
                kind: 'text' as const,
                cell: (m: Member) => MemberActions({ p, m }),
              },
            ]
          : []),
      ]}
    />
  );
}

function InviteCard({ p }: { p: TeamPageProps }) {
  return (
    <Card title="Invite a member" id="invite">
      <p class="muted">
        Portico makes a one-time link that works for 7 days; send it to the person yourself. Opening
        it, they choose a password and are signed in.
      </p>
      <form method="post" action="/settings/team/invite">
        <input type="hidden" name="csrf" value={p.csrfToken} />
        <Field
          name="email"
          label="Email"
          type="email"
          autocomplete="off"
          required
          maxLength={320}
          value={p.form?.email}
        />
        <Field name="role" label="Role" options={ROLE_OPTIONS} value={p.form?.role ?? 'agent'} />
        <Actions>
          <Button testid="invite">Make the invitation link</Button>
        </Actions>
      </form>
    </Card>
  );
}

/** `/settings/team`. */
export function TeamPage(p: TeamPageProps) {
  const away = p.availability === 'away';
  return (
    <Layout
      title="Team"
      signedIn={{ email: p.email, csrfToken: p.csrfToken }}
      current="team"
      scripts={p.newInvitation ? ['/assets/one-time-token.js'] : undefined}
      wide
    >
      <PageHeader
        title="Team"
        lead="The members of this portal: administrators change everything; agents work the inbox and contacts."
      />
      <Flash flash={p.flash} />
      <ErrorFlash>{p.error}</ErrorFlash>
      {p.newInvitation && (
        <div class="warning" role="status" data-testid="invitation">
          <p class="ok">
            Send this link to {p.newInvitation.email}. It is shown only this once, works once, and
            expires {day(p.newInvitation.expiresAt)}.
          </p>
          <label for="invitation-link">One-time invitation link</label>
          <input
            id="invitation-link"
            class="secret"
            type="text"
            readonly
            value={p.newInvitation.link}
            data-select-on-click
            data-testid="invitation-link"
            autocomplete="off"
            spellcheck={false}
          />
          <p class="actions">
            <button
              type="button"
              hidden
              data-copy-from="invitation-link"
              data-copy-status="copy-status"
            >
              Copy
            </button>
            <span id="copy-status" class="muted" aria-live="polite">
              Click the field to select it all.
            </span>
          </p>
        </div>
      )}
      <Card title="Your availability" testid="availability">
        <p>
          You are <strong data-testid="my-availability">{p.availability}</strong>
          {away ? ': no new conversations are given to you.' : '.'}
        </p>
        <form method="post" action="/settings/team/availability">
          <input type="hidden" name="csrf" value={p.csrfToken} />
          <input type="hidden" name="availability" value={away ? 'available' : 'away'} />
          <Button kind="secondary" testid="toggle-availability">
            {away ? 'Set available' : 'Set away'}
          </Button>
        </form>
      </Card>
      <Card title="Members">
        <MembersTable p={p} />
        {!p.isAdmin && <p class="muted">Only an administrator can change the team.</p>}
      </Card>
      {p.isAdmin && <InviteCard p={p} />}
    </Layout>
  );
}

/** The confirmation of disabling or removing a member. */
export function ConfirmMemberPage(p: {
  email: string;
  csrfToken: string;
  member: Member;
  action: 'disable' | 'remove';
}) {
  const remove = p.action === 'remove';
  return (
    <Layout title={remove ? 'Remove member' : 'Disable member'} signedIn={p} current="team">
      <ConfirmStep
        title={remove ? `Remove ${p.member.email}?` : `Disable ${p.member.email}?`}
        csrfToken={p.csrfToken}
        action={`/settings/team/${p.member.userId}/${p.action}`}
        confirmLabel={remove ? 'Remove member' : 'Disable member'}
        cancelHref="/settings/team"
        cancelLabel="Cancel"
      >
        <p>
          <strong>They are signed out at once, on every browser.</strong>{' '}
          {remove
            ? 'Their account is deleted: to come back they need a new invitation. This cannot be undone.'
            : 'They cannot sign in until an administrator enables them again.'}
        </p>
      </ConfirmStep>
    </Layout>
  );
}
