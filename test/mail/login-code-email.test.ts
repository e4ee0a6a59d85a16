import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loginCodeEmail } from '../../src/mail/login-code-email.ts';

const input = {
  code: '042137',
  tenantName: 'Example Shop',
  from: 'login@shop.example',
  to: 'ada@example.org',
  validMinutes: 10,
};

test('the message carries the code in text and HTML, says it is valid 10 minutes, and is sent as the tenant', () => {
  const mail = loginCodeEmail(input);
  assert.deepEqual(mail.from, { name: 'Example Shop', address: 'login@shop.example' });
  assert.equal(mail.to, 'ada@example.org');
  assert.equal(mail.subject, 'Your log-in code for Example Shop');
  assert.match(mail.text, /^ {4}042137$/m);
  assert.match(mail.text, /valid for 10 minutes/);
  assert.match(mail.html ?? '', />042137<\/p>/);
  assert.match(mail.html ?? '', /valid for 10 minutes/);
  assert.match(mail.html ?? '', /<html lang="en">/);
});

test('the code is not in the subject, where notifications would show it', () => {
  assert.doesNotMatch(loginCodeEmail(input).subject, /042137/);
});

test('nothing in the message tracks the reader: no images, links or remote content', () => {
  const { html, text } = loginCodeEmail(input);
  assert.doesNotMatch(html ?? '', /<img|<a\b|<link|src=|href=|url\(|https?:/i);
  assert.doesNotMatch(text, /https?:/);
});

test('the tenant name is escaped in HTML and kept to one line in headers', () => {
  const mail = loginCodeEmail({ ...input, tenantName: '<b>Shop</b>\r\nBcc: evil@example.org' });
  assert.match(mail.html ?? '', /&lt;b&gt;Shop&lt;\/b&gt; Bcc: evil@example\.org/);
  assert.doesNotMatch(mail.html ?? '', /<b>/);
  assert.equal(mail.subject, 'Your log-in code for <b>Shop</b> Bcc: evil@example.org');
  assert.doesNotMatch(JSON.stringify(mail.from), /\\r|\\n/);
});
