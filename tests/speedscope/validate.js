// SPDX-License-Identifier: MIT
// validate.js - checks a speedscope JSON file against the schema the
// speedscope npm package ships (dist/release/file-format-schema.json), with
// ajv; prints ajv's errors and exits 1 when the file does not conform.
// Usage: node validate.js FILE.json
'use strict';
const fs = require('fs');
const path = require('path');
const Ajv = require('ajv');

const schemaPath = path.join(__dirname, 'node_modules', 'speedscope', 'dist', 'release',
	'file-format-schema.json');
const schema = JSON.parse(fs.readFileSync(schemaPath, 'utf8'));
const data = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
const ajv = new Ajv({ allErrors: true, strict: false });
const validate = ajv.compile(schema);

if (!validate(data)) {
	console.log(JSON.stringify(validate.errors, null, 1));
	process.exit(1);
}
console.log(`valid: ${data.profiles.length} profiles, ${data.shared.frames.length} frames`);
// one line per profile for the shell test: name, unit, summed weights, and
// whether every sample indexes an existing frame
for (const p of data.profiles) {
	const sum = p.weights.reduce((a, b) => a + b, 0);
	const inRange = p.samples.every((s) => s.every((i) => i >= 0 && i < data.shared.frames.length));
	console.log(`profile\t${p.name}\t${p.unit}\t${sum}\t${p.endValue}\t${inRange}`);
}
