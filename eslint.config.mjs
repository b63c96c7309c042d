// Lint rules for the whole monorepo: typescript-eslint's recommended set, no floating or misused promises in the
// services and libraries (type-aware), and the import boundaries of docs/contributing.md.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';

/** Frameworks and drivers a domain folder never imports (docs/contributing.md, Layout). */
const FRAMEWORKS = ['@nestjs/*', 'nestjs-pino', 'typeorm', 'typeorm/*', 'kafkajs', 'pg', 'pg/*', 'ioredis'];

/** A relative import of another area's `database/` from a file `depth` folders below `src/`. */
const crossAreaDatabase = (depth) => ({
  regex: `^(\\.\\./){${depth}}[^./][^/]*/database(/|$)`,
  message: "another area's database/: go through that area's commands or events",
});

/**
 * Import boundaries of every service (one no-restricted-imports setting per file: later blocks replace earlier
 * ones, so each block lists all that applies to its files).
 */
const boundaries = [
  ...[1, 2, 3].map((depth) => ({
    files: [`apps/*/src/*/${'*/'.repeat(depth - 1)}*.ts`],
    rules: { 'no-restricted-imports': ['error', { patterns: [crossAreaDatabase(depth)] }] },
  })),
  {
    files: ['apps/*/src/**/domain/**/*.ts', 'libs/*/src/**/domain/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: FRAMEWORKS, message: 'the domain is plain TypeScript: no framework, ORM or driver' },
            { regex: '(^|/)database(/|$)', message: 'the domain imports no database code' },
          ],
        },
      ],
    },
  },
  {
    // SQL only behind the database/ functions of an area (migrations are frozen history; specs set up rows).
    files: ['apps/*/src/**/*.ts'],
    ignores: ['apps/*/src/**/database/**', 'apps/*/src/migrations/**', 'apps/*/src/**/*.spec.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        ...[
          "CallExpression[callee.property.name='query']",
          'CallExpression[callee.name=/^(sql|updateReturning)$/]',
          'TemplateLiteral[quasis.0.value.raw=/^\\s*(SELECT|INSERT|UPDATE|DELETE|WITH)\\s/]',
        ].map((selector) => ({
          selector,
          message: "SQL lives in the area's database/: call a repository function",
        })),
      ],
    },
  },
  {
    files: ['apps/*/src/**/consumers/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^\\.\\.?/(?!(\\.\\./)*([^./][^/]*/)?commands(/|$))',
              message: 'a consumer hands the event to a command: it imports commands/ only',
            },
            {
              regex: '^@checkout/(?!contracts$|messaging$)',
              message: 'a consumer imports libs/contracts and libs/messaging only',
            },
          ],
        },
      ],
    },
  },
];

export default tseslint.config(
  { ignores: ['**/dist/**', '**/node_modules/**', '.stack/**', '.nx/**', 'test-artifacts/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'off',
      'no-console': 'off',
    },
  },
  {
    // Promises in the services and libraries are awaited, returned or handed to something that handles them.
    files: ['apps/*/src/**/*.ts', 'libs/*/src/**/*.ts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
    },
  },
  ...boundaries,
  {
    // jest loads its configs and plug-ins (runner, environment, global set-up) with require()
    files: ['**/jest.config.js', 'jest.unit.config.js', 'tools/jest/**/*.js'],
    languageOptions: { sourceType: 'commonjs' },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
);
