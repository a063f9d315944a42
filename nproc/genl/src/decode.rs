//! Reply decoding with the `nproc-proto` tables.

use nproc_proto::{
    attr, field_attr, global_item, task_field, FieldDesc, FieldSet, FieldType, Unit,
};

use crate::attrs::{self, Attr, Attrs};
use crate::Error;

/// One field or global item as the kernel describes it (`GET_FIELDS`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldInfo {
    /// Its id (attribute type of its values).
    pub id: u16,
    /// Its name.
    pub name: String,
    /// Its encoding, `None` when this client does not know the kernel's
    /// value (a newer kernel).
    pub ty: Option<FieldType>,
    /// Its unit, `None` when unknown to this client.
    pub unit: Option<Unit>,
    /// `nproc_proto::flags` bits.
    pub flags: u32,
    /// Task field or global item; `None` when unknown to this client.
    pub set: Option<FieldSet>,
}

/// A decoded value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Value {
    /// [`FieldType::U32`].
    U32(u32),
    /// [`FieldType::U64`].
    U64(u64),
    /// [`FieldType::S32`].
    S32(i32),
    /// [`FieldType::String`], without its NUL: the kernel's bytes (a comm
    /// need not be UTF-8).
    Str(Vec<u8>),
    /// [`FieldType::Bytes`]: the attribute's payload as sent (a command
    /// line keeps its NULs).
    Bytes(Vec<u8>),
    /// A field this client's table does not know (a newer kernel): the
    /// attribute's bytes.
    Raw(Vec<u8>),
}

impl Value {
    /// The value as an unsigned integer, if it is a number (an `S32` as
    /// its two's complement widened to 64 bits).
    pub fn as_u64(&self) -> Option<u64> {
        match self {
            Value::U32(v) => Some(u64::from(*v)),
            Value::U64(v) => Some(*v),
            Value::S32(v) => Some(*v as u64),
            Value::Str(_) | Value::Bytes(_) | Value::Raw(_) => None,
        }
    }
}

impl std::fmt::Display for Value {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Value::U32(v) => write!(f, "{v}"),
            Value::U64(v) => write!(f, "{v}"),
            Value::S32(v) => write!(f, "{v}"),
            Value::Str(s) => write!(f, "{}", String::from_utf8_lossy(s)),
            Value::Bytes(b) => write!(f, "{}", b.escape_ascii()),
            Value::Raw(b) => {
                for x in b {
                    write!(f, "{x:02x}")?;
                }
                Ok(())
            }
        }
    }
}

/// One task: its values by field id, in increasing id order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Record {
    /// `(field id, value)`, sorted by id.
    pub values: Vec<(u16, Value)>,
}

impl Record {
    /// The value of field `id`, if the kernel sent it.
    pub fn get(&self, id: u16) -> Option<&Value> {
        self.values
            .binary_search_by_key(&id, |(k, _)| *k)
            .ok()
            .and_then(|i| self.values.get(i))
            .map(|(_, v)| v)
    }
}

/// The one nest of type `kind` among the top-level attributes.
fn nest<'a>(payload: &'a [u8], kind: u16, what: &'a str) -> Result<&'a [u8], Error> {
    for a in Attrs::new(payload, what) {
        let a = a?;
        if a.kind == kind {
            return Ok(a.value);
        }
    }
    Err(Error::Decode(format!("{what}: no attribute {kind}")))
}

fn u32_of(v: &[u8], what: &str) -> Result<u32, Error> {
    <[u8; 4]>::try_from(v)
        .map(u32::from_ne_bytes)
        .map_err(|_| Error::Decode(format!("{what}: {} bytes for a u32", v.len())))
}

fn string_of(v: &[u8], what: &str) -> Result<Vec<u8>, Error> {
    str_ref(v, what).map(<[u8]>::to_vec)
}

/// [`string_of`], borrowing.
fn str_ref<'a>(v: &'a [u8], what: &str) -> Result<&'a [u8], Error> {
    match crate::nul::first_nul(v) {
        Some(end) => Ok(v.get(..end).unwrap_or_default()),
        None => Err(Error::Decode(format!("{what}: string without NUL"))),
    }
}

/// A value of type `ty` for the field `d`.
fn value(d: &FieldDesc, v: &[u8]) -> Result<Value, Error> {
    value_ref(d, v).map(|v| v.to_owned())
}

/// A value as it lies in the message: numbers decoded, strings and bytes
/// borrowed. What [`TaskView::for_each`] hands out, so that a consumer
/// that keeps only some values (a `ps` turning them into its own record)
/// allocates nothing for the others.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ValueRef<'a> {
    /// [`Value::U32`].
    U32(u32),
    /// [`Value::U64`].
    U64(u64),
    /// [`Value::S32`].
    S32(i32),
    /// [`Value::Str`]: the bytes before the NUL.
    Str(&'a [u8]),
    /// [`Value::Bytes`].
    Bytes(&'a [u8]),
    /// [`Value::Raw`]: a field this crate does not know.
    Raw(&'a [u8]),
}

impl ValueRef<'_> {
    /// The number, widened as [`Value::as_u64`] widens it.
    pub fn as_u64(&self) -> Option<u64> {
        match *self {
            ValueRef::U32(v) => Some(u64::from(v)),
            ValueRef::U64(v) => Some(v),
            ValueRef::S32(v) => Some(v as u64),
            ValueRef::Str(_) | ValueRef::Bytes(_) | ValueRef::Raw(_) => None,
        }
    }

    /// The owned [`Value`].
    pub fn to_owned(&self) -> Value {
        match *self {
            ValueRef::U32(v) => Value::U32(v),
            ValueRef::U64(v) => Value::U64(v),
            ValueRef::S32(v) => Value::S32(v),
            ValueRef::Str(s) => Value::Str(s.to_vec()),
            ValueRef::Bytes(b) => Value::Bytes(b.to_vec()),
            ValueRef::Raw(b) => Value::Raw(b.to_vec()),
        }
    }
}

/// A value of `len` bytes for the field `d`, whose type has another width.
#[cold]
#[inline(never)]
fn width_error(d: &FieldDesc, len: usize) -> Error {
    Error::Decode(format!(
        "field {} ({}): {} bytes for a {}",
        d.name,
        d.id,
        len,
        d.ty.name()
    ))
}

/// [`value`], borrowing.
#[inline]
fn value_ref<'a>(d: &FieldDesc, v: &'a [u8]) -> Result<ValueRef<'a>, Error> {
    let bad = || width_error(d, v.len());
    Ok(match d.ty {
        FieldType::U32 => ValueRef::U32(
            <[u8; 4]>::try_from(v)
                .map(u32::from_ne_bytes)
                .map_err(|_| bad())?,
        ),
        FieldType::S32 => ValueRef::S32(
            <[u8; 4]>::try_from(v)
                .map(i32::from_ne_bytes)
                .map_err(|_| bad())?,
        ),
        FieldType::U64 => ValueRef::U64(
            <[u8; 8]>::try_from(v)
                .map(u64::from_ne_bytes)
                .map_err(|_| bad())?,
        ),
        FieldType::String => ValueRef::Str(str_ref(v, d.name)?),
        FieldType::Bytes => ValueRef::Bytes(v),
    })
}

/// The values of a nest whose attribute types are ids of one table.
fn values(
    buf: &[u8],
    lookup: fn(u16) -> Option<&'static FieldDesc>,
    what: &str,
) -> Result<Vec<(u16, Value)>, Error> {
    // One allocation per record: a record has at most one value per id,
    // and a dump asks for a few dozen (an attribute is at least 4 bytes).
    let mut out = Vec::with_capacity((buf.len() / 4).min(nproc_proto::TASK_FIELDS.len() + 1));
    for a in Attrs::new(buf, what) {
        let Attr { kind: id, value: v } = a?;
        if id == 0 {
            continue; // padding before a u64
        }
        let val = match lookup(id) {
            Some(d) => value(d, v)?,
            None => Value::Raw(v.to_vec()),
        };
        out.push((id, val));
    }
    // The kernel sends ids in order: sort only what came otherwise.
    if !out.is_sorted_by_key(|(id, _)| *id) {
        out.sort_by_key(|(id, _)| *id);
    }
    Ok(out)
}

/// One `GET_TASKS` message, not yet decoded: [`TaskView::for_each`]
/// decodes its values one by one, each checked as [`Record`]'s are.
#[derive(Clone, Copy, Debug)]
pub struct TaskView<'a> {
    attrs: &'a [u8],
}

impl<'a> TaskView<'a> {
    /// The view of a task nest's contents (the attributes inside
    /// `NPROC_A_TASK`), as a message from elsewhere (a capture, a test)
    /// holds them; nothing is checked until [`TaskView::for_each`].
    pub fn from_nest(attrs: &'a [u8]) -> Self {
        TaskView { attrs }
    }

    /// Calls `f` with every value of the task in the order the kernel
    /// sent them (id order), padding skipped; stops at the first
    /// malformed attribute, which is the error.
    pub fn for_each(&self, mut f: impl FnMut(u16, ValueRef<'a>)) -> Result<(), Error> {
        attrs::for_each(self.attrs, "GET_TASKS task", |id, v| {
            // Id 0 is the padding before a u64.
            if id != 0 {
                let value = match task_field(id) {
                    Some(d) => value_ref(d, v)?,
                    None => ValueRef::Raw(v),
                };
                f(id, value);
            }
            Ok(())
        })
    }

    /// Calls `f` with every attribute's id and raw value, in the order the
    /// kernel sent them, padding skipped; stops at the first malformed
    /// attribute or at `f`'s first error, which is the result. For a
    /// consumer that knows which fields it asked for and reads each with
    /// [`task_number`] or [`task_string`], whose widths the table fixes at
    /// compile time: one dispatch per value instead of [`TaskView::for_each`]'s
    /// lookup, type dispatch and the consumer's own. Only the values read
    /// are checked.
    pub fn for_each_raw(
        &self,
        mut f: impl FnMut(u16, &'a [u8]) -> Result<(), Error>,
    ) -> Result<(), Error> {
        attrs::for_each(self.attrs, "GET_TASKS task", |id, value| match id {
            0 => Ok(()),
            _ => f(id, value),
        })
    }
}

/// The table entry of task field `id`, for compile-time checks.
const fn task_desc(id: u16) -> &'static FieldDesc {
    match nproc_proto::task_field(id) {
        Some(d) => d,
        None => panic!("no task field has this id"),
    }
}

/// [`width_error`] for task field `ID` (which [`task_desc`] checked when
/// compiling).
#[cold]
#[inline(never)]
fn bad_width<const ID: u16>(len: usize) -> Error {
    width_error(const { task_desc(ID) }, len)
}

/// The number of task field `ID` in `v`, by the table's type for it, known
/// when compiling (a field that is not a number does not compile): a u32
/// or s32 as its 32 bits, zero-extended (as [`ValueRef::as_u64`] gives
/// them), a u64 as it is. An error naming the field when `v` has another
/// width.
///
/// ```compile_fail
/// // comm is a string: no number to read.
/// let _ = nproc_genl::task_number::<{ nproc_proto::field_id::COMM }>(&[]);
/// ```
#[inline(always)]
pub fn task_number<const ID: u16>(v: &[u8]) -> Result<u64, Error> {
    let wide = const {
        match task_desc(ID).ty {
            FieldType::U32 | FieldType::S32 => false,
            FieldType::U64 => true,
            FieldType::String | FieldType::Bytes => panic!("not a number field"),
        }
    };
    if wide {
        match <[u8; 8]>::try_from(v) {
            Ok(b) => Ok(u64::from_ne_bytes(b)),
            Err(_) => Err(bad_width::<ID>(v.len())),
        }
    } else {
        match <[u8; 4]>::try_from(v) {
            Ok(b) => Ok(u64::from(u32::from_ne_bytes(b))),
            Err(_) => Err(bad_width::<ID>(v.len())),
        }
    }
}

/// The string of task field `ID` in `v` (the bytes before its NUL); a
/// field that is not a string does not compile. An error naming the field
/// when `v` has no NUL.
#[inline(always)]
pub fn task_string<const ID: u16>(v: &[u8]) -> Result<&[u8], Error> {
    const {
        assert!(
            matches!(task_desc(ID).ty, FieldType::String),
            "not a string field"
        )
    };
    str_ref(v, const { task_desc(ID).name })
}

/// The bytes of task field `ID` in `v`, as they lie; a field that is not
/// bytes does not compile.
#[inline(always)]
pub fn task_bytes<const ID: u16>(v: &[u8]) -> &[u8] {
    const {
        assert!(
            matches!(task_desc(ID).ty, FieldType::Bytes),
            "not a bytes field"
        )
    };
    v
}

/// The view of one `GET_TASKS` message.
pub(crate) fn task_view(payload: &[u8]) -> Result<TaskView<'_>, Error> {
    Ok(TaskView {
        attrs: nest(payload, attr::TASK, "GET_TASKS")?,
    })
}

pub(crate) fn task(payload: &[u8]) -> Result<Record, Error> {
    let n = nest(payload, attr::TASK, "GET_TASKS")?;
    Ok(Record {
        values: values(n, task_field, "GET_TASKS task")?,
    })
}

/// The `GET_GLOBAL` reply's attributes.
pub(crate) fn global(payload: &[u8]) -> Result<Vec<(u16, Value)>, Error> {
    let n = nest(payload, attr::GLOBAL, "GET_GLOBAL")?;
    values(n, global_item, "GET_GLOBAL items")
}

/// A `GET_FIELDS` reply message's attributes.
pub(crate) fn field_info(payload: &[u8]) -> Result<FieldInfo, Error> {
    let n = nest(payload, attr::FIELD, "GET_FIELDS")?;
    let (mut id, mut name) = (None, None);
    let mut f = FieldInfo {
        id: 0,
        name: String::new(),
        ty: None,
        unit: None,
        flags: 0,
        set: None,
    };
    for a in Attrs::new(n, "GET_FIELDS field") {
        let Attr { kind, value: v } = a?;
        match kind {
            field_attr::ID => id = Some(u32_of(v, "field id")?),
            field_attr::NAME => {
                name = Some(String::from_utf8_lossy(&string_of(v, "field name")?).into_owned())
            }
            field_attr::TYPE => f.ty = FieldType::from_u32(u32_of(v, "field type")?),
            field_attr::UNIT => f.unit = Unit::from_u32(u32_of(v, "field unit")?),
            field_attr::FLAGS => f.flags = u32_of(v, "field flags")?,
            field_attr::SET => f.set = FieldSet::from_u32(u32_of(v, "field set")?),
            _ => {} // a newer kernel's description attribute
        }
    }
    let id = id.ok_or_else(|| Error::Decode("GET_FIELDS: a field without id".into()))?;
    f.id = u16::try_from(id).map_err(|_| Error::Decode(format!("GET_FIELDS: field id {id}")))?;
    f.name = name.ok_or_else(|| Error::Decode(format!("GET_FIELDS: field {id} without name")))?;
    Ok(f)
}

/// The text of extended ack attributes: `NLMSGERR_ATTR_MSG`, or for a
/// required attribute the request lacked (`GENL_REQ_ATTR_CHECK()` sends
/// `NLMSGERR_ATTR_MISS_TYPE` and no text) a sentence naming it.
pub fn extack_message(tlvs: &[u8]) -> Option<String> {
    const NLMSGERR_ATTR_MSG: u16 = 1;
    const NLMSGERR_ATTR_MISS_TYPE: u16 = 5;
    let mut missing = None;
    for a in Attrs::new(tlvs, "extack").map_while(Result::ok) {
        match a.kind {
            NLMSGERR_ATTR_MSG => {
                return string_of(a.value, "extack")
                    .ok()
                    .map(|s| String::from_utf8_lossy(&s).into_owned());
            }
            NLMSGERR_ATTR_MISS_TYPE => missing = u32_of(a.value, "extack").ok(),
            _ => {}
        }
    }
    missing.map(|t| {
        let name = match u16::try_from(t) {
            Ok(attr::FIELDS) => " (the field bitmap)",
            Ok(attr::PID) => " (the pid)",
            Ok(attr::SCOPE) => " (the scope)",
            _ => "",
        };
        format!("missing attribute {t}{name}")
    })
}

#[cfg(test)]
mod tests;
