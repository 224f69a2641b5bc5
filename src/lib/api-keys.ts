/**
 * API keys are 32 random bytes, shown once. Only a SHA-256 digest is stored: the keys carry full entropy,
 * so a fast hash is enough and keeps the per-request lookup cheap.
 */
import { hash, randomBytes } from 'node:crypto'

export const ROLES = ['administrator', 'editor', 'author', 'contributor', 'subscriber'] as const
export type Role = (typeof ROLES)[number]

export function isRole(value: unknown): value is Role {
  return typeof value === 'string' && (ROLES as readonly string[]).includes(value)
}

const PREFIX = 'cal_'

export function generateKey(): string {
  return PREFIX + randomBytes(32).toString('base64url')
}

/** The key's stored digest (SHA-256, hex); one-shot (`crypto.hash`: a third of a `createHash` chain's CPU, every authenticated request). */
export function hashKey(key: string): string {
  return hash('sha256', key, 'hex')
}

/** The key in an `Authorization: Bearer <key>` header, or undefined. */
export function bearerKey(header: string | undefined): string | undefined {
  if (header === undefined) return undefined
  const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header)
  return match?.[1]
}
