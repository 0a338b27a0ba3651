/**
 * Which provider gave an answer, tied to the answer itself (the parsed JSON object the provider sent,
 * and the objects formatted from it), never to the lookup it answered: a later answer to the same
 * lookup by another provider, or an answer to the same block asked another way, cannot take its place.
 * The quorum (src/engine/evidence-quorum.ts) counts evidence built from one provider's answer as that
 * provider's vote, and nothing else.
 */
const sources = new WeakMap<object, number>()

/** Provider `provider` (its pool index) sent `answer`. Answers that are not objects carry no source. */
export function noteAnswerSource(answer: unknown, provider: number): void {
  if (answer !== null && typeof answer === 'object') sources.set(answer, provider)
}

/** The provider that sent `answer` (or the answer it was formatted from), if known. */
export function answerSourceOf(answer: unknown): number | undefined {
  return answer !== null && typeof answer === 'object' ? sources.get(answer) : undefined
}

/** `formatted` was made from `raw` alone: it carries the same source. Returns `formatted`. */
export function carryAnswerSource<T>(raw: unknown, formatted: T): T {
  const source = answerSourceOf(raw)
  if (source !== undefined) noteAnswerSource(formatted, source)
  return formatted
}
