package io.tidemark.metadata.image;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;

class PersistentMapTest {

  @Property(tries = 100)
  void behavesLikeATreeMapAndNeverChangesOldVersions(
      @ForAll @Size(max = 200) List<@IntRange(min = -50, max = 50) Integer> ops) {
    // Goal: random puts/removes give the same contents and order as TreeMap; earlier versions stay intact.
    PersistentMap<Integer, Integer> map = PersistentMap.empty();
    TreeMap<Integer, Integer> model = new TreeMap<>();
    List<PersistentMap<Integer, Integer>> versions = new ArrayList<>();
    List<TreeMap<Integer, Integer>> models = new ArrayList<>();
    int step = 0;
    for (int op : ops) {
      step++;
      if (op >= 0) {
        map = map.put(op, step);
        model.put(op, step);
      } else {
        map = map.remove(-op);
        model.remove(-op);
      }
      versions.add(map);
      models.add(new TreeMap<>(model));
    }
    for (int i = 0; i < versions.size(); i++) {
      assertSame(versions.get(i), models.get(i));
    }
  }

  private static void assertSame(PersistentMap<Integer, Integer> map, TreeMap<Integer, Integer> model) {
    assertThat(map.size()).isEqualTo(model.size());
    List<Map.Entry<Integer, Integer>> entries = new ArrayList<>();
    map.forEach((k, v) -> entries.add(Map.entry(k, v)));
    assertThat(entries).containsExactlyElementsOf(model.entrySet().stream().map(e -> Map.entry(e.getKey(), e.getValue())).toList());
    for (int k = -2; k <= 52; k += 3) {
      assertThat(map.get(k)).isEqualTo(model.get(k));
      Map.Entry<Integer, Integer> floor = map.floor(k);
      Map.Entry<Integer, Integer> expected = model.floorEntry(k);
      assertThat(floor == null ? null : floor.getKey()).isEqualTo(expected == null ? null : expected.getKey());
      Iterator<Map.Entry<Integer, Integer>> from = map.iteratorFrom(k);
      Integer ceiling = model.ceilingKey(k);
      assertThat(from.hasNext() ? from.next().getKey() : null).isEqualTo(ceiling);
    }
  }
}
