/**
 * Reading and writing members whose names come from outside (claim names, policy parameters,
 * JSON pointers): only the object's own members are read, and a write is always data, so that
 * `__proto__`, `constructor` or `toString` stay names and never reach a prototype or a built-in.
 */

/** The object's own member, never an inherited one; undefined for anything not an object. */
export const ownMember = (node: unknown, name: string): unknown =>
  node !== null && typeof node === 'object' && Object.hasOwn(node, name)
    ? (node as Record<string, unknown>)[name]
    : undefined;

/** Sets a member as data: assigning `__proto__` would change the object's prototype instead. */
export function setMember(node: Record<string, unknown>, name: string, value: unknown): void {
  Object.defineProperty(node, name, { value, writable: true, enumerable: true, configurable: true });
}
