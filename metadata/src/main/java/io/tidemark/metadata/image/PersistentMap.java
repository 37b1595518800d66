package io.tidemark.metadata.image;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Deque;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.function.BiConsumer;

/**
 * An immutable sorted map whose updates return a new map sharing all unchanged nodes with the old
 * one (a treap with path copying: O(log n) expected per update, priorities derived from the key's
 * hash so the shape depends only on the contents). Iteration is in key order, which keeps every
 * replica's traversal, and so every computed record list, identical.
 *
 * <p>Threading: immutable, safe to share between threads without locks.
 *
 * @param <K> key type, naturally ordered
 * @param <V> value type
 */
public final class PersistentMap<K extends Comparable<K>, V> implements Iterable<Map.Entry<K, V>> {

  private static final PersistentMap<?, ?> EMPTY = new PersistentMap<>(null);

  private final Node<K, V> root;

  private PersistentMap(Node<K, V> root) {
    this.root = root;
  }

  @SuppressWarnings("unchecked")
  public static <K extends Comparable<K>, V> PersistentMap<K, V> empty() {
    return (PersistentMap<K, V>) EMPTY;
  }

  private static final class Node<K, V> implements Map.Entry<K, V> {
    final K key;
    final V value;
    final int priority;
    final int size;
    final Node<K, V> left;
    final Node<K, V> right;

    Node(K key, V value, int priority, Node<K, V> left, Node<K, V> right) {
      this.key = key;
      this.value = value;
      this.priority = priority;
      this.left = left;
      this.right = right;
      this.size = 1 + sizeOf(left) + sizeOf(right);
    }

    Node<K, V> with(Node<K, V> newLeft, Node<K, V> newRight) {
      return newLeft == left && newRight == right ? this : new Node<>(key, value, priority, newLeft, newRight);
    }

    @Override
    public K getKey() {
      return key;
    }

    @Override
    public V getValue() {
      return value;
    }

    @Override
    public V setValue(V v) {
      throw new UnsupportedOperationException("immutable");
    }

    @Override
    public String toString() {
      return key + "=" + value;
    }
  }

  private static int sizeOf(Node<?, ?> n) {
    return n == null ? 0 : n.size;
  }

  private static int priorityOf(Object key) {
    int h = key.hashCode() * 0x9E3779B9;
    return h ^ (h >>> 15);
  }

  public int size() {
    return sizeOf(root);
  }

  public boolean isEmpty() {
    return root == null;
  }

  public V get(K key) {
    Node<K, V> n = root;
    while (n != null) {
      int c = key.compareTo(n.key);
      if (c == 0) {
        return n.value;
      }
      n = c < 0 ? n.left : n.right;
    }
    return null;
  }

  public boolean containsKey(K key) {
    return get(key) != null;
  }

  public V getOrDefault(K key, V fallback) {
    V v = get(key);
    return v == null ? fallback : v;
  }

  /** A map with {@code key} bound to {@code value} (null values are not allowed). */
  public PersistentMap<K, V> put(K key, V value) {
    if (value == null) {
      throw new IllegalArgumentException("null value for key " + key);
    }
    return new PersistentMap<>(insert(root, key, value, priorityOf(key)));
  }

  /** A map without {@code key}; this map when the key is absent. */
  public PersistentMap<K, V> remove(K key) {
    Node<K, V> newRoot = delete(root, key);
    return newRoot == root ? this : new PersistentMap<>(newRoot);
  }

  private static <K extends Comparable<K>, V> Node<K, V> insert(Node<K, V> n, K key, V value, int priority) {
    if (n == null) {
      return new Node<>(key, value, priority, null, null);
    }
    int c = key.compareTo(n.key);
    if (c == 0) {
      return new Node<>(key, value, n.priority, n.left, n.right);
    }
    if (c < 0) {
      Node<K, V> l = insert(n.left, key, value, priority);
      if (l.priority > n.priority) { // rotate right
        return l.with(l.left, n.with(l.right, n.right));
      }
      return n.with(l, n.right);
    }
    Node<K, V> r = insert(n.right, key, value, priority);
    if (r.priority > n.priority) { // rotate left
      return r.with(n.with(n.left, r.left), r.right);
    }
    return n.with(n.left, r);
  }

  private static <K extends Comparable<K>, V> Node<K, V> delete(Node<K, V> n, K key) {
    if (n == null) {
      return null;
    }
    int c = key.compareTo(n.key);
    if (c < 0) {
      return n.with(delete(n.left, key), n.right);
    }
    if (c > 0) {
      return n.with(n.left, delete(n.right, key));
    }
    return merge(n.left, n.right);
  }

  private static <K, V> Node<K, V> merge(Node<K, V> a, Node<K, V> b) {
    if (a == null) {
      return b;
    }
    if (b == null) {
      return a;
    }
    if (a.priority > b.priority) {
      return a.with(a.left, merge(a.right, b));
    }
    return b.with(merge(a, b.left), b.right);
  }

  /**
   * Collects entries and builds a map from all of them at once in O(n) (after an O(n log n) sort
   * when they were not added in ascending key order), instead of n path-copying inserts. The
   * result equals the map the same entries would give by {@link #put}. Not thread-safe; one owner.
   */
  public static final class BulkBuilder<K extends Comparable<K>, V> {
    private final List<K> keys = new ArrayList<>();
    private final List<V> values = new ArrayList<>();
    private boolean ascending = true;

    public BulkBuilder<K, V> add(K key, V value) {
      if (value == null) {
        throw new IllegalArgumentException("null value for key " + key);
      }
      if (ascending && !keys.isEmpty() && keys.get(keys.size() - 1).compareTo(key) >= 0) {
        ascending = false;
      }
      keys.add(key);
      values.add(value);
      return this;
    }

    /** The map of all added entries; throws {@link IllegalArgumentException} when a key was added twice. */
    public PersistentMap<K, V> build() {
      int n = keys.size();
      Integer[] order = new Integer[n];
      for (int i = 0; i < n; i++) {
        order[i] = i;
      }
      if (!ascending) {
        Arrays.sort(order, (a, b) -> keys.get(a).compareTo(keys.get(b)));
        for (int i = 1; i < n; i++) {
          if (keys.get(order[i - 1]).compareTo(keys.get(order[i])) == 0) {
            throw new IllegalArgumentException("key " + keys.get(order[i]) + " added twice");
          }
        }
      }
      // a Cartesian tree over the sorted keys by priority: the treap of these entries, in one pass
      int[] priority = new int[n];
      int[] left = new int[n];
      int[] right = new int[n];
      int[] spine = new int[n];
      int top = -1;
      for (int i = 0; i < n; i++) {
        priority[i] = priorityOf(keys.get(order[i]));
        left[i] = -1;
        right[i] = -1;
        int last = -1;
        while (top >= 0 && priority[spine[top]] < priority[i]) {
          last = spine[top--];
        }
        left[i] = last;
        if (top >= 0) {
          right[spine[top]] = i;
        }
        spine[++top] = i;
      }
      return top < 0 ? empty() : new PersistentMap<>(node(spine[0], order, priority, left, right));
    }

    private Node<K, V> node(int i, Integer[] order, int[] priority, int[] left, int[] right) {
      if (i < 0) {
        return null;
      }
      Node<K, V> l = node(left[i], order, priority, left, right);
      Node<K, V> r = node(right[i], order, priority, left, right);
      return new Node<>(keys.get(order[i]), values.get(order[i]), priority[i], l, r);
    }
  }

  /** The entry with the greatest key {@code <= key}, or null. */
  public Map.Entry<K, V> floor(K key) {
    Node<K, V> n = root;
    Node<K, V> best = null;
    while (n != null) {
      int c = key.compareTo(n.key);
      if (c == 0) {
        return n;
      }
      if (c < 0) {
        n = n.left;
      } else {
        best = n;
        n = n.right;
      }
    }
    return best;
  }

  /** The entry with the smallest key. */
  public Map.Entry<K, V> first() {
    Node<K, V> n = root;
    if (n == null) {
      return null;
    }
    while (n.left != null) {
      n = n.left;
    }
    return n;
  }

  /** The entry with the greatest key. */
  public Map.Entry<K, V> last() {
    Node<K, V> n = root;
    if (n == null) {
      return null;
    }
    while (n.right != null) {
      n = n.right;
    }
    return n;
  }

  @Override
  public Iterator<Map.Entry<K, V>> iterator() {
    return iteratorFrom(null);
  }

  /** Entries with key {@code >= from} (all entries when {@code from} is null), in key order. */
  public Iterator<Map.Entry<K, V>> iteratorFrom(K from) {
    Deque<Node<K, V>> stack = new ArrayDeque<>();
    Node<K, V> n = root;
    while (n != null) {
      if (from == null || from.compareTo(n.key) <= 0) {
        stack.push(n);
        n = n.left;
      } else {
        n = n.right;
      }
    }
    return new Iterator<>() {
      @Override
      public boolean hasNext() {
        return !stack.isEmpty();
      }

      @Override
      public Map.Entry<K, V> next() {
        if (stack.isEmpty()) {
          throw new NoSuchElementException();
        }
        Node<K, V> top = stack.pop();
        Node<K, V> c = top.right;
        while (c != null) {
          stack.push(c);
          c = c.left;
        }
        return top;
      }
    };
  }

  public void forEach(BiConsumer<K, V> action) {
    for (Map.Entry<K, V> e : this) {
      action.accept(e.getKey(), e.getValue());
    }
  }

  public Iterable<V> values() {
    return () -> {
      Iterator<Map.Entry<K, V>> it = iterator();
      return new Iterator<>() {
        @Override
        public boolean hasNext() {
          return it.hasNext();
        }

        @Override
        public V next() {
          return it.next().getValue();
        }
      };
    };
  }

  @Override
  public boolean equals(Object o) {
    if (this == o) {
      return true;
    }
    if (!(o instanceof PersistentMap<?, ?> other) || other.size() != size()) {
      return false;
    }
    Iterator<? extends Map.Entry<?, ?>> a = iterator();
    Iterator<? extends Map.Entry<?, ?>> b = other.iterator();
    while (a.hasNext()) {
      Map.Entry<?, ?> x = a.next();
      Map.Entry<?, ?> y = b.next();
      if (!x.getKey().equals(y.getKey()) || !x.getValue().equals(y.getValue())) {
        return false;
      }
    }
    return true;
  }

  @Override
  public int hashCode() {
    int h = 0;
    for (Map.Entry<K, V> e : this) {
      h += e.getKey().hashCode() ^ e.getValue().hashCode();
    }
    return h;
  }

  @Override
  public String toString() {
    StringBuilder sb = new StringBuilder("{");
    for (Map.Entry<K, V> e : this) {
      if (sb.length() > 1) {
        sb.append(", ");
      }
      sb.append(e.getKey()).append('=').append(e.getValue());
    }
    return sb.append('}').toString();
  }
}
