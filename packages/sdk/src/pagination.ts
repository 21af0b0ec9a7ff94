/** One page as the iterator sees it, whatever the list's own shape. */
export interface Page<T> {
  items: T[];
  /** The cursor of the next page; null when this page is the last. */
  next: string | null;
}

/** The shape of every list but `GET /calls`. */
export interface DataPage<T> {
  data: T[];
  has_more: boolean;
  cursor: string | null;
}

/**
 * `{data, has_more, cursor}` → Page. The end is `has_more: false`, never an empty page: a
 * page may be empty (rows deleted meanwhile) while later ones are not.
 */
export const fromDataPage = <T>(page: DataPage<T>): Page<T> => ({
  items: page.data,
  next: page.has_more ? page.cursor : null,
});

/**
 * Every item of a list, page after page, newest first: `for await (const x of list)`.
 * Pages are fetched lazily, one at a time; `break` stops fetching.
 */
export class PageIterator<T> implements AsyncIterable<T> {
  constructor(
    private readonly fetchPage: (cursor: string | undefined) => Promise<Page<T>>,
    /** Where to start; the first page when undefined. */
    private readonly start?: string,
  ) {}

  /** The pages themselves, for callers that work a page at a time. */
  async *pages(): AsyncGenerator<T[], void, undefined> {
    let cursor = this.start;
    for (;;) {
      const page = await this.fetchPage(cursor);
      yield page.items;
      if (page.next === null) return;
      // The same cursor again would loop forever: the list is not advancing.
      if (page.next === cursor) throw new Error('the API returned the same cursor again');
      cursor = page.next;
    }
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<T, void, undefined> {
    for await (const items of this.pages()) yield* items;
  }

  /** Collects up to `max` items (default: all of them). */
  async toArray(max = Infinity): Promise<T[]> {
    const out: T[] = [];
    if (max <= 0) return out;
    for await (const item of this) {
      out.push(item);
      if (out.length >= max) break;
    }
    return out;
  }
}
