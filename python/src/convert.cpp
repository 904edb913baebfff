// Python values <-> library values; see convert.hpp. The datetime C API is used here only
// (its capsule pointer is private to each translation unit).
#include "convert.hpp"

#include <datetime.h>

#include <chrono>
#include <string>

namespace interloper::python {

namespace {

using namespace std::chrono;

void import_datetime() {
  if (PyDateTimeAPI == nullptr) {
    PyDateTime_IMPORT;
    if (PyDateTimeAPI == nullptr) throw py::error_already_set();
  }
}

std::string type_name_of(py::handle object) {
  return py::str(py::type::of(object).attr("__qualname__"));
}

// The UTC offset of an aware datetime in seconds; nullopt for a naive one.
std::optional<std::int64_t> utc_offset(py::handle object) {
  PyObject* tz = PyDateTime_DATE_GET_TZINFO(object.ptr());
  if (tz == Py_None) return std::nullopt;
  py::object offset = py::reinterpret_borrow<py::object>(object).attr("utcoffset")();
  if (offset.is_none()) return std::nullopt;
  PyObject* d = offset.ptr();
  return std::int64_t{PyDateTime_DELTA_GET_DAYS(d)} * 86400 + PyDateTime_DELTA_GET_SECONDS(d);
}

std::int64_t days_of(py::handle date) {
  const year_month_day ymd{year{PyDateTime_GET_YEAR(date.ptr())},
                           month{static_cast<unsigned>(PyDateTime_GET_MONTH(date.ptr()))},
                           day{static_cast<unsigned>(PyDateTime_GET_DAY(date.ptr()))}};
  return sys_days(ymd).time_since_epoch().count();
}

// Seconds since 1970-01-01T00:00:00 of a datetime's label, in UTC when it is aware.
std::int64_t seconds_of_datetime(py::handle object) {
  PyObject* p = object.ptr();
  std::int64_t seconds = days_of(object) * 86400 + PyDateTime_DATE_GET_HOUR(p) * 3600 +
                         PyDateTime_DATE_GET_MINUTE(p) * 60 + PyDateTime_DATE_GET_SECOND(p);
  if (auto offset = utc_offset(object)) seconds -= *offset;
  return seconds;
}

}  // namespace

// ---- Time ---------------------------------------------------------------------------------

TimePoint to_time_point(py::handle object, std::string_view argument) {
  import_datetime();
  if (PyDateTime_Check(object.ptr())) {
    return TimePoint::from_epoch_seconds(seconds_of_datetime(object));
  }
  if (PyDate_Check(object.ptr())) return TimePoint::from_epoch_seconds(days_of(object) * 86400);
  throw py::type_error(std::string(argument) +
                       " must be a datetime.date or datetime.datetime, not " +
                       type_name_of(object));
}

bool is_aware(py::handle object) {
  import_datetime();
  return PyDateTime_Check(object.ptr()) && utc_offset(object).has_value();
}

TimeShape shape_of(TimeGranularity granularity) {
  return granularity == TimeGranularity::HOUR ? TimeShape::naive : TimeShape::date;
}

TimeShape shape_of(py::handle like, TimeGranularity granularity) {
  import_datetime();
  if (PyDateTime_Check(like.ptr())) return is_aware(like) ? TimeShape::utc : TimeShape::naive;
  return shape_of(granularity);
}

py::object from_time_point(TimePoint t, TimeShape shape) { return from_time_point(t, shape, 0); }

py::object from_time_point(TimePoint t, TimeShape shape, int microseconds) {
  import_datetime();
  const std::int64_t seconds = t.epoch_seconds();
  std::int64_t days = seconds / 86400;
  std::int64_t rest = seconds % 86400;
  if (rest < 0) {
    rest += 86400;
    --days;
  }
  const year_month_day ymd{sys_days{std::chrono::days{days}}};
  const int y = static_cast<int>(ymd.year());
  const int m = static_cast<int>(static_cast<unsigned>(ymd.month()));
  const int d = static_cast<int>(static_cast<unsigned>(ymd.day()));
  PyObject* made = nullptr;
  if (shape == TimeShape::date && rest == 0 && microseconds == 0) {
    made = PyDateTimeAPI->Date_FromDate(y, m, d, PyDateTimeAPI->DateType);
  } else {
    PyObject* tz = shape == TimeShape::utc ? PyDateTime_TimeZone_UTC : Py_None;
    made = PyDateTimeAPI->DateTime_FromDateAndTime(
        y, m, d, static_cast<int>(rest / 3600), static_cast<int>(rest / 60 % 60),
        static_cast<int>(rest % 60), microseconds, tz, PyDateTimeAPI->DateTimeType);
  }
  if (made == nullptr) throw py::error_already_set();
  return py::reinterpret_steal<py::object>(made);
}

// ---- Values -------------------------------------------------------------------------------

namespace {

// decimal.Decimal and the json module, imported once (the GIL guards the first import).
py::object& decimal_type() {
  static py::object* type = new py::object(py::module_::import("decimal").attr("Decimal"));
  return *type;
}

py::object& json_module() {
  static py::object* module = new py::object(py::module_::import("json"));
  return *module;
}

bool is_decimal(py::handle object) {
  return PyObject_IsInstance(object.ptr(), decimal_type().ptr()) == 1;
}

[[noreturn]] void refuse(py::handle object, std::string_view column, std::string_view why) {
  throw py::value_error("column '" + std::string(column) +
                        "': " + py::repr(object).cast<std::string>() + " " + std::string(why));
}

// A decimal.Decimal as an exact decimal; NaN, infinities and more than 38 digits are refused.
Value decimal_value(py::handle object, std::string_view column) {
  if (!object.attr("is_finite")().cast<bool>()) refuse(object, column, "is not a finite number");
  // Fixed-point text ('f'), never an exponent, which Decimal::parse reads digit by digit.
  const std::string text = py::str(py::str("{:f}").attr("format")(object));
  std::optional<Decimal> exact = Decimal::parse(text);
  if (!exact) refuse(object, column, "has more than 38 digits");
  return Value(*exact);
}

// A list, tuple or dict as a json value: Python's JSON text, made canonical by parse_json.
Value json_value(py::handle object, std::string_view column) {
  std::string text;
  try {
    text = py::str(json_module().attr("dumps")(object, py::arg("allow_nan") = false));
  } catch (py::error_already_set& e) {
    refuse(object, column, std::string("is not JSON: ") + e.what());
  }
  try {
    return Value(parse_json(text));
  } catch (const Error& e) {
    refuse(object, column, std::string("is not JSON: ") + e.what());
  }
}

}  // namespace

Value to_value(py::handle object, std::string_view column) {
  PyObject* p = object.ptr();
  if (PyUnicode_Check(p)) {
    Py_ssize_t size = 0;
    const char* text = PyUnicode_AsUTF8AndSize(p, &size);
    if (text == nullptr) throw py::error_already_set();
    return Value(std::string(text, static_cast<std::size_t>(size)));
  }
  if (p == Py_None) return Value();
  if (PyBool_Check(p)) return Value(p == Py_True);
  if (PyLong_Check(p)) {
    int overflow = 0;
    const long long i = PyLong_AsLongLongAndOverflow(p, &overflow);
    if (overflow != 0) {
      throw py::value_error("column '" + std::string(column) +
                            "': " + py::repr(object).cast<std::string>() +
                            " does not fit in a 64-bit integer");
    }
    if (i == -1 && PyErr_Occurred()) throw py::error_already_set();
    return Value(i);
  }
  if (PyFloat_Check(p)) return Value(PyFloat_AS_DOUBLE(p));
  import_datetime();
  if (PyDateTime_Check(p)) {
    return Value(Value::Timestamp{seconds{seconds_of_datetime(object)}} +
                 std::chrono::microseconds{PyDateTime_DATE_GET_MICROSECOND(p)});
  }
  if (PyDate_Check(p)) return Value(Value::Date{std::chrono::days{days_of(object)}});
  if (is_decimal(object)) return decimal_value(object, column);
  if (PyList_Check(p) || PyTuple_Check(p) || PyDict_Check(p)) return json_value(object, column);
  // NumPy and pandas scalars (what a DataFrame's rows hold) know their Python value.
  if (py::hasattr(object, "item") && !py::isinstance<py::sequence>(object)) {
    return to_value(object.attr("item")(), column);
  }
  throw py::type_error("column '" + std::string(column) + "': a " + type_name_of(object) + " (" +
                       py::repr(object).cast<std::string>() +
                       ") cannot be stored; cells are None, bool, int, float, str, "
                       "datetime.date, datetime.datetime, decimal.Decimal, list or dict");
}

py::object from_value(const Value& value) {
  switch (value.type()) {
    case DataType::null:
      return py::none();
    case DataType::boolean:
      return py::bool_(value.as_bool());
    case DataType::int64:
      return py::int_(value.as_int());
    case DataType::float64:
      return py::float_(value.as_double());
    case DataType::string:
      return py::str(value.as_string());
    case DataType::date:
      return from_time_point(TimePoint(value.as_date()), TimeShape::date);
    case DataType::timestamp: {
      const Value::Timestamp t = value.as_timestamp();
      const auto whole = std::chrono::floor<seconds>(t);
      return from_time_point(TimePoint(whole), TimeShape::utc,
                             static_cast<int>((t - whole).count()));
    }
    case DataType::decimal:
      return decimal_type()(value.to_string());
    case DataType::json:
      return json_module().attr("loads")(value.as_json().text);
  }
  return py::none();
}

// ---- Rows ---------------------------------------------------------------------------------

void RowAppender::append(py::handle row, std::size_t row_number) {
  PyObject* dict = row.ptr();
  if (!PyDict_Check(dict)) {
    throw py::type_error("row " + std::to_string(row_number) + " is a " + type_name_of(row) +
                         ", not a dict of column -> value");
  }
  PyObject* key = nullptr;
  PyObject* item = nullptr;
  Py_ssize_t position = 0;
  // The fast path: the same keys as the previous row, in the same order.
  if (static_cast<std::size_t>(PyDict_Size(dict)) == keys_.size() && !keys_.empty()) {
    cells_.assign(table_.num_columns(), Value());
    std::size_t i = 0;
    bool same = true;
    while (PyDict_Next(dict, &position, &key, &item)) {
      PyObject* known = keys_[i].ptr();
      if (key != known && !(PyUnicode_Check(key) && PyUnicode_Compare(key, known) == 0)) {
        same = false;
        break;
      }
      cells_[columns_[i]] = to_value(item, names_[i]);
      ++i;
    }
    if (same) {
      table_.append_row(std::move(cells_));
      cells_ = {};
      return;
    }
    position = 0;
  }
  std::vector<std::pair<std::string, Value>> cells;
  keys_.clear();
  names_.clear();
  while (PyDict_Next(dict, &position, &key, &item)) {
    if (!PyUnicode_Check(key)) {
      throw py::type_error("row " + std::to_string(row_number) + ": the key " +
                           py::repr(key).cast<std::string>() + " is not a str");
    }
    std::string name = py::reinterpret_borrow<py::str>(key);
    cells.emplace_back(name, to_value(item, name));
    keys_.push_back(py::reinterpret_borrow<py::object>(key));
    names_.push_back(std::move(name));
  }
  table_.append(std::move(cells));
  columns_.clear();
  for (const std::string& name : names_) columns_.push_back(*table_.column_index(name));
}

py::list to_rows(const Table& table) {
  const std::size_t columns = table.num_columns();
  std::vector<py::str> names;
  for (const Field& field : table.schema().fields()) names.emplace_back(field.name);
  py::list rows(table.num_rows());
  for (std::size_t r = 0; r < table.num_rows(); ++r) {
    py::dict row;
    for (std::size_t c = 0; c < columns; ++c) row[names[c]] = from_value(table.column(c)[r]);
    rows[r] = std::move(row);
  }
  return rows;
}

}  // namespace interloper::python
