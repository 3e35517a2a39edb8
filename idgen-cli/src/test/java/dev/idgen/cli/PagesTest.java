package dev.idgen.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** {@link Pages#all}: the tokens it sends, the items it keeps, and where it stops. */
class PagesTest {

  /** A page of a fake listing: its items and its next token. */
  private record Page(List<String> items, String next) {}

  @Test
  void sendsEachPagesTokenAndKeepsEveryItemInOrder() {
    Map<String, Page> listing = Map.of(
        "", new Page(List.of("a", "b"), "t1"),
        "t1", new Page(List.of("c"), "t2"),
        "t2", new Page(List.of(), "t3"), // an empty page that is not the last one
        "t3", new Page(List.of("d"), ""));
    List<String> sent = new ArrayList<>();

    List<String> all = Pages.all(token -> {
      sent.add(token);
      return listing.get(token);
    }, Page::items, Page::next);

    assertThat(all).containsExactly("a", "b", "c", "d");
    assertThat(sent).containsExactly("", "t1", "t2", "t3");
  }

  @Test
  void oneCallWhenTheFirstPageIsTheLast() {
    List<String> sent = new ArrayList<>();

    List<String> all = Pages.all(token -> {
      sent.add(token);
      return new Page(List.of(), "");
    }, Page::items, Page::next);

    assertThat(all).isEmpty();
    assertThat(sent).containsExactly("");
  }

  @Test
  void aTokenAnsweredWithItselfStopsInsteadOfLoopingForever() {
    List<String> sent = new ArrayList<>();

    assertThatThrownBy(() -> Pages.all(token -> {
      sent.add(token);
      if (sent.size() > 10) {
        throw new AssertionError("still paging after 10 calls");
      }
      return new Page(List.of("x"), "stuck");
    }, Page::items, Page::next))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("'stuck'")
        .hasMessageContaining("after 2 items");
    assertThat(sent).containsExactly("", "stuck");
  }
}
