// ESLint: typescript-eslint's recommended rules with type information, over everything tsc checks.
import js from '@eslint/js'
import tseslint from 'typescript-eslint'

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'bench/.data/', '.tap/', 'eslint.config.js', 'dashboard/build.mjs'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      // The scripts run before anything is compiled, as plain JavaScript outside the project.
      parserOptions: { projectService: { allowDefaultProject: ['scripts/*.mjs'] }, tsconfigRootDir: import.meta.dirname }
    },
    rules: {
      // Fastify plugins and hooks are async functions by contract, whether or not they await.
      '@typescript-eslint/require-await': 'off',
      // An unused name is an error; a leading underscore says "left out on purpose" (a destructured
      // member dropped from a copy, a parameter a callback's signature requires).
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', ignoreRestSiblings: true }]
    }
  },
  {
    files: ['test/**/*.ts'],
    rules: {
      // tap runs a subtest whether or not its promise is awaited, and reports its failures itself.
      '@typescript-eslint/no-floating-promises': [
        'error',
        { allowForKnownSafePromises: [{ from: 'package', package: '@tapjs/core', name: 'PromiseWithSubtest' }] }
      ],
      // Responses are JSON read back as `any` on purpose: the assertions are what check their shape.
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off'
    }
  }
)
