#!/usr/bin/env node
// The admin CLI. Node.js 24 runs the TypeScript sources directly (type stripping).
import '../src/cli/main.ts';
