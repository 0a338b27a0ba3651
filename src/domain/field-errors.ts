/** One problem with one request field, as listed in a problem+json `errors` array. */
export interface FieldError {
  path: string
  message: string
}

/** Collects field errors while a request is read, so that every problem is reported at once. */
export class FieldErrors {
  readonly list: FieldError[] = []
  add(path: string, message: string): void {
    this.list.push({ path, message })
  }
  get empty(): boolean {
    return this.list.length === 0
  }
}
