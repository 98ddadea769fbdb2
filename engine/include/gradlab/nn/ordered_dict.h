// LibTorch's OrderedDict: a map that remembers insertion order, which is what
// makes a module's parameters() come out in the order they were registered
// (and so an optimiser's state line up with them). Iterating yields items with
// key() and value(); what a failed lookup raises names the kind of key.
#pragma once
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "gradlab/error.h"

namespace gradlab {

template <class Key, class Value>
class OrderedDict {
 public:
  class Item {
   public:
    Item(Key key, Value value) : pair_(std::move(key), std::move(value)) {}
    const Key& key() const noexcept { return pair_.first; }
    Value& value() noexcept { return pair_.second; }
    const Value& value() const noexcept { return pair_.second; }
    Value& operator*() noexcept { return value(); }
    const Value& operator*() const noexcept { return value(); }
    Value* operator->() noexcept { return &value(); }
    const Value* operator->() const noexcept { return &value(); }
    const std::pair<Key, Value>& pair() const noexcept { return pair_; }

   private:
    std::pair<Key, Value> pair_;
  };
  using Iterator = typename std::vector<Item>::iterator;
  using ConstIterator = typename std::vector<Item>::const_iterator;

  explicit OrderedDict(std::string key_description = "Key") : key_description_(std::move(key_description)) {}

  const std::string& key_description() const noexcept { return key_description_; }
  size_t size() const noexcept { return items_.size(); }
  bool is_empty() const noexcept { return items_.empty(); }
  bool contains(const Key& key) const noexcept { return index_.count(key) != 0; }

  Iterator begin() { return items_.begin(); }
  Iterator end() { return items_.end(); }
  ConstIterator begin() const { return items_.begin(); }
  ConstIterator end() const { return items_.end(); }
  Item& front() { return at_index(0); }
  Item& back() { return at_index(items_.size() - 1); }
  Item& operator[](size_t i) { return at_index(i); }
  const Item& operator[](size_t i) const { return const_cast<OrderedDict*>(this)->at_index(i); }

  Value& operator[](const Key& key) {
    Value* v = find(key);
    GRADLAB_CHECK(v != nullptr, key_description_, " '", key, "' is not defined");
    return *v;
  }
  const Value& operator[](const Key& key) const { return (*const_cast<OrderedDict*>(this))[key]; }
  Value* find(const Key& key) noexcept {
    auto it = index_.find(key);
    return it == index_.end() ? nullptr : &items_[it->second].value();
  }
  const Value* find(const Key& key) const noexcept { return const_cast<OrderedDict*>(this)->find(key); }

  Value& insert(Key key, Value value) {
    GRADLAB_CHECK(index_.count(key) == 0, key_description_, " '", key, "' already defined");
    index_.emplace(key, items_.size());
    items_.emplace_back(std::move(key), std::move(value));
    return items_.back().value();
  }
  void erase(const Key& key) {
    auto it = index_.find(key);
    GRADLAB_CHECK(it != index_.end(), "Key '", key, "' doesn't exist");
    items_.erase(items_.begin() + static_cast<std::ptrdiff_t>(it->second));
    index_.clear();
    for (size_t i = 0; i < items_.size(); ++i) index_.emplace(items_[i].key(), i);
  }
  void clear() {
    items_.clear();
    index_.clear();
  }

  const std::vector<Item>& items() const noexcept { return items_; }
  std::vector<Key> keys() const {
    std::vector<Key> r;
    for (const auto& i : items_) r.push_back(i.key());
    return r;
  }
  std::vector<Value> values() const {
    std::vector<Value> r;
    for (const auto& i : items_) r.push_back(i.value());
    return r;
  }

 private:
  Item& at_index(size_t i) {
    GRADLAB_CHECK(i < items_.size(), "Index ", i, " is out of bounds");
    return items_[i];
  }
  std::string key_description_;
  std::vector<Item> items_;
  std::unordered_map<Key, size_t> index_;
};

}  // namespace gradlab
