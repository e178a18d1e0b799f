/**
 * Support agents: the operator's people who answer every portal's tickets. Created, listed and
 * disabled from the CLI; they sign in on `/agent/login` with the same password rules as portal
 * users. An agent belongs to no portal and is never shown to customers by email.
 *
 * @see docs/support.md "The support team's side"
 */
import { and, asc, eq, isNull } from 'drizzle-orm';
import { recordAuditEvent, type Actor } from '../audit/audit-log.ts';
import type { Database } from '../db/client.ts';
import { agents, sessions } from '../db/schema/index.ts';
import { isUniqueViolation } from '../platform/database-errors.ts';
import { UsageError } from '../platform/errors.ts';
import { hasControlCharacters } from '../platform/plain-text.ts';
import { hashPassword, passwordProblem, verifyPassword } from '../platform/passwords.ts';

const EMAIL = /^[^\s@\p{Cc}]{1,64}@[^\s@\p{Cc}]{1,253}\.[^\s@\p{Cc}]{1,63}$/u;
/** Longest display name (characters). */
export const AGENT_NAME_MAX = 80;

/** An agent as the CLI lists it. Never the password hash. */
export interface AgentSummary {
  agentId: number;
  email: string;
  name: string;
  /** ISO 8601 UTC, or null while the agent can sign in. */
  disabledAt: string | null;
  createdAt: string;
}

function checkEmail(email: string): string {
  const normalized = email.trim().toLowerCase();
  if (!EMAIL.test(normalized)) throw new UsageError(`Not an email address: ${email}`);
  return normalized;
}

function checkName(name: string): string {
  const trimmed = name.trim();
  // Customers see agents' names: no control characters, nor bidi controls that disguise one.
  if (trimmed.length === 0 || trimmed.length > AGENT_NAME_MAX || hasControlCharacters(trimmed)) {
    throw new UsageError(
      `The agent's name must be 1–${AGENT_NAME_MAX} printable characters, without control or ` +
        'text-direction characters.',
    );
  }
  return trimmed;
}

function summary(row: typeof agents.$inferSelect): AgentSummary {
  return {
    agentId: row.id,
    email: row.email,
    name: row.displayName,
    disabledAt: row.disabledAt?.toISOString() ?? null,
    createdAt: row.createdAt.toISOString(),
  };
}

export type AgentsService = ReturnType<typeof createAgentsService>;

export function createAgentsService({ db }: { db: Database }) {
  return {
    /**
     * Create an agent who can sign in at once.
     *
     * @throws UsageError for a bad email or name, a password outside the rules, or an email
     *   already taken by another agent.
     */
    async createAgent(input: {
      email: string;
      name: string;
      password: string;
      actor: Actor;
    }): Promise<AgentSummary> {
      const email = checkEmail(input.email);
      const displayName = checkName(input.name);
      const problem = passwordProblem(input.password);
      if (problem) throw new UsageError(problem);
      const passwordHash = await hashPassword(input.password);
      try {
        return await db.transaction(async (tx) => {
          const [row] = await tx
            .insert(agents)
            .values({ email, displayName, passwordHash })
            .returning();
          await recordAuditEvent(tx, {
            portalId: null,
            actor: input.actor,
            action: 'agent.created',
            reason: `Support agent ${row!.id} created.`,
          });
          return summary(row!);
        });
      } catch (err) {
        if (isUniqueViolation(err)) throw new UsageError(`An agent ${email} already exists.`);
        throw err;
      }
    },

    /** Every agent, oldest first. */
    async listAgents(): Promise<AgentSummary[]> {
      const rows = await db.select().from(agents).orderBy(asc(agents.id));
      return rows.map(summary);
    },

    /**
     * Disable an agent: no more sign-in, and every session of theirs ends now. Their replies
     * keep their name. Idempotent.
     *
     * @throws UsageError `not_found` for an unknown email.
     */
    async disableAgent(input: { email: string; actor: Actor }): Promise<AgentSummary> {
      const email = checkEmail(input.email);
      return db.transaction(async (tx) => {
        const [row] = await tx.select().from(agents).where(eq(agents.email, email));
        if (!row) throw new UsageError(`No agent ${email}.`, 'not_found');
        await tx.delete(sessions).where(eq(sessions.agentId, row.id));
        if (row.disabledAt) return summary(row);
        const [updated] = await tx
          .update(agents)
          .set({ disabledAt: new Date() })
          .where(eq(agents.id, row.id))
          .returning();
        await recordAuditEvent(tx, {
          portalId: null,
          actor: input.actor,
          action: 'agent.disabled',
          reason: `Support agent ${row.id} disabled.`,
        });
        return summary(updated!);
      });
    },

    /**
     * The enabled agent with this email, or null. For the CLI's `--agent <email>`.
     */
    async findActiveAgent(email: string): Promise<{ agentId: number; name: string } | null> {
      const normalized = email.trim().toLowerCase();
      if (!EMAIL.test(normalized)) return null;
      const [row] = await db
        .select()
        .from(agents)
        .where(and(eq(agents.email, normalized), isNull(agents.disabledAt)));
      return row ? { agentId: row.id, name: row.displayName } : null;
    },

    /**
     * Check an agent's password. The scrypt work is done even for an unknown or disabled agent,
     * so the answer's timing does not tell which.
     *
     * @returns the agent, or null.
     */
    async authenticateAgent(email: string, password: string): Promise<{ agentId: number } | null> {
      const normalized = email.trim().toLowerCase();
      const [row] = EMAIL.test(normalized)
        ? await db.select().from(agents).where(eq(agents.email, normalized))
        : [];
      const ok = await verifyPassword(password, row?.passwordHash ?? null);
      return ok && row && !row.disabledAt ? { agentId: row.id } : null;
    },
  };
}
