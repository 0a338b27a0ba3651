/** A first-in first-out line whose shift is O(1) (Array#shift moves every element of a long line). */
export function createLine<T>() {
  let items: (T | undefined)[] = []
  let head = 0
  return {
    get length() {
      return items.length - head
    },
    push(item: T) {
      items.push(item)
    },
    shift(): T | undefined {
      if (head >= items.length) return undefined
      const item = items[head]
      items[head++] = undefined
      // Compact once the consumed part is most of the array.
      if (head > 1024 && head * 2 > items.length) {
        items = items.slice(head)
        head = 0
      }
      return item
    },
  }
}
