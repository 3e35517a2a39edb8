package dev.idgen.cli;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

/**
 * Pages through a List call (AIP-158): asks for the first page with an empty token, then for each next one
 * with the {@code next_page_token} of the page before, until a page comes without one. The pages are fetched
 * one after the other, on the caller's thread.
 */
final class Pages {
  private Pages() {}

  /**
   * Every item of every page, in the order the server sent them.
   *
   * @param call one call, given the page token to send
   * @param items the items of a page
   * @param nextToken a page's {@code next_page_token} (empty: the last page)
   * @throws IllegalStateException a page whose next token is the one it was asked with: paging on would ask
   *     for the same page forever
   */
  static <R, T> List<T> all(Function<String, R> call, Function<R, List<T>> items, Function<R, String> nextToken) {
    List<T> all = new ArrayList<>();
    String token = "";
    // Bounded: the token changes every round (checked), and the server's listing ends.
    do {
      R page = call.apply(token);
      all.addAll(items.apply(page));
      String next = nextToken.apply(page);
      if (!next.isEmpty() && next.equals(token)) {
        throw new IllegalStateException("the server answered page token '" + token + "' with the same token"
            + " again; stopped after " + all.size() + " items instead of asking for that page forever");
      }
      token = next;
    } while (!token.isEmpty());
    return all;
  }
}
