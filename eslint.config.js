// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: [
      'node_modules',
      'dist',
      'data',
      'bench/results',
      'test-output',
      'src/db/migrations',
      '.cache',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: {
        // Build scripts run by plain node (scripts/*.mjs) sit outside the TypeScript project.
        projectService: { allowDefaultProject: ['scripts/*.mjs'] },
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': [
        'error',
        {
          // node:test's test()/describe() return promises the runner itself awaits.
          allowForKnownSafeCalls: [
            { from: 'package', package: 'node:test', name: ['test', 'describe', 'it', 'suite'] },
          ],
        },
      ],
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_' },
      ],
      'no-console': ['error', { allow: ['warn'] }],
      // Fastify plugins and handlers are async by contract, with or without an await inside.
      '@typescript-eslint/require-await': 'off',
    },
  },
  {
    // A backstop, not the cutting rule (docs/architecture.md): a file holds one concern and is
    // split where its concerns part, whatever its length; these only catch a file or function
    // that has grown past what anyone can hold in their head. Every line counts, comments included.
    files: ['src/**'],
    rules: {
      'max-lines': ['error', { max: 500 }],
      'max-lines-per-function': ['error', { max: 160 }],
    },
  },
  {
    // The CLI, the benchmarks and the scripts talk to a person on a terminal.
    files: ['src/cli.ts', 'src/**/cli-*.ts', 'bench/**', 'scripts/**'],
    rules: { 'no-console': 'off' },
  },
  {
    // Tests read JSON bodies (`res.json()` is `any`) and assert on their shape.
    files: ['test/**'],
    rules: {
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
    },
  },
  {
    files: ['eslint.config.js', '.dependency-cruiser.cjs'],
    ...tseslint.configs.disableTypeChecked,
  },
  {
    files: ['.dependency-cruiser.cjs'],
    languageOptions: { sourceType: 'commonjs', globals: { module: 'writable' } },
  },
);
