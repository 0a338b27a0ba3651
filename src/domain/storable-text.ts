/**
 * Text PostgreSQL cannot store: a NUL character (text and jsonb refuse it) or an unpaired UTF-16
 * surrogate (jsonb refuses it, text would silently store U+FFFD). Such input is refused before it
 * reaches a statement, so it never turns into a database error.
 */
export const isStorableText = (value: string): boolean => !value.includes('\u0000') && value.isWellFormed()
