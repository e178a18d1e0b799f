/**
 * The `credit` commands of the admin CLI: an operator tops up a portal's messaging credit
 * (integer minor units of MESSAGING_CURRENCY), through a running server's admin socket or
 * against the storage directly, like every admin command.
 *
 * @see README.md "Messaging"
 */
import type { Command } from 'commander';
import { action, json, portal } from './cli-commands.ts';

/** `credit add`: top up a portal's messaging credit. */
export function addCreditCommands(program: Command): void {
  const creditCmd = program.command('credit').description("a portal's messaging credit");
  creditCmd
    .command('add')
    .description('add credit to a portal (audited as credit.added)')
    .requiredOption(...portal)
    .requiredOption('--amount <minor units>', 'whole minor units, e.g. 500 for 5.00 EUR', (v) =>
      /^\d{1,15}$/.test(v) ? Number(v) : Number.NaN,
    )
    .requiredOption('--note <text>', 'why (kept in the ledger; never a secret)')
    .addOption(json)
    .action(
      action(
        'credit add',
        (o) => ({ portal: o.portal, amount: o.amount, note: o.note }),
        (r) => {
          const c = r as {
            balance: number;
            reserved: number;
            currency: string;
            transactionId: string;
          };
          return (
            `Credit added (${c.transactionId}). Balance ${c.balance} ${c.currency} minor units, ` +
            `${c.reserved} reserved.`
          );
        },
      ),
    );
}
