/**
 * `contacts import` and `contacts list` as an operator runs them, on a data directory no server
 * holds (the CLI opens it itself).
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { runCli, tempDataDir } from '../helpers/spawn.ts';

describe('admin CLI: contacts', () => {
  const dataDir = tempDataDir();
  const env = { DATA_DIR: dataDir };

  test('import a CSV (a bad row reported by line) and a JSON file, then list and search', async (t) => {
    const portal = await runCli(
      t,
      ['portal', 'create', '--name', 'C', '--admin-email', 'c@c.test', '--code', '8101'],
      env,
    );
    assert.equal(portal.code, 0, portal.stderr);
    const csv = join(dataDir, 'contacts.csv');
    writeFileSync(
      csv,
      '\ufeffphone,First_Name,lastName,tags,plan\n' +
        '+1 650 555 1234,"Ada, Countess",Lovelace,vip;beta,pro\n' +
        '06 12 34 56 78,No,Country,,\n' +
        '+44 20 7946 0958,Bob,,,\n',
    );
    const imported = await runCli(
      t,
      ['contacts', 'import', '--portal', '8101', '--file', csv],
      env,
    );
    assert.equal(imported.code, 0, imported.stderr);
    assert.match(
      imported.stdout,
      /Imported 3 row\(s\): 2 created, 0 updated, 0 unchanged, 1 not imported/,
    );
    assert.match(imported.stdout, /line 3: phone needs a country code/);

    const jsonFile = join(dataDir, 'contacts.json');
    writeFileSync(
      jsonFile,
      JSON.stringify([{ phone: '+16505551234', firstName: 'Ada, Countess' }]),
    );
    const again = await runCli(
      t,
      ['contacts', 'import', '--portal', '8101', '--file', jsonFile, '--json'],
      env,
    );
    assert.equal(again.code, 0, again.stderr);
    assert.deepEqual(JSON.parse(again.stdout), {
      created: 0,
      updated: 0,
      unchanged: 1,
      failed: [],
    });

    const list = await runCli(t, ['contacts', 'list', '--portal', '8101', '--json'], env);
    const page = JSON.parse(list.stdout);
    assert.deepEqual(page.items.map((c: { phone: string }) => c.phone).sort(), [
      '+16505551234',
      '+442079460958',
    ]);
    const ada = page.items.find((c: { phone: string }) => c.phone === '+16505551234');
    assert.deepEqual(
      [ada.firstName, ada.tags, ada.attributes],
      ['Ada, Countess', ['vip', 'beta'], { plan: 'pro' }],
    );

    const search = await runCli(t, ['contacts', 'list', '--portal', '8101', '--q', 'bo'], env);
    assert.match(search.stdout, /\+442079460958 {2}Bob/);
    assert.doesNotMatch(search.stdout, /Ada/);
  });

  test('a file that is not contacts is one clear line and exit 1', async (t) => {
    const bad = join(dataDir, 'bad.csv');
    writeFileSync(bad, 'name,email\nx,y\n');
    for (const file of [bad, join(dataDir, 'missing.csv'), join(dataDir, 'x.txt')]) {
      const res = await runCli(t, ['contacts', 'import', '--portal', '8101', '--file', file], env);
      assert.equal(res.code, 1, file);
      assert.match(res.stderr, /^error: .+\n$/);
    }
  });
});
