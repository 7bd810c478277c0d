//! The repository's tantivy schema.
//!
//! Only `body` is scored. It holds [`PageVersion::indexed_text`](crate::corpus::PageVersion::indexed_text)
//! (title, newline, visible text), so a page's score is a function of one field's statistics —
//! which the forward index reproduces exactly (see [`super::stats`]). `title` is indexed and
//! stored for display and snippets but never scored.

use tantivy::schema::{
    Field, IndexRecordOption, Schema, TextFieldIndexing, TextOptions, FAST, INDEXED, STORED, STRING,
};

use crate::text::ANALYZER_NAME;

/// Field handles of the repository schema.
#[derive(Debug, Clone)]
pub struct RepoSchema {
    pub(crate) schema: Schema,
    /// The page URL, raw (untokenized), stored: the unique key of a document.
    pub(crate) url: Field,
    /// xxh3 of the URL bytes ([`url_hash`]), a fast field breaking score ties deterministically.
    pub(crate) url_hash: Field,
    /// The corpus [`PageId`](crate::corpus::PageId): fast (maps a hit back to the page) and stored.
    pub(crate) page: Field,
    /// Title, `en_stem`, stored. Not scored.
    pub(crate) title: Field,
    /// Title + text, `en_stem` with frequencies and positions, stored: the one scored field.
    pub(crate) body: Field,
    /// Out-links (page ids), stored only, so an index reopened from disk can rebuild in-links.
    pub(crate) links: Field,
}

impl RepoSchema {
    pub fn build() -> Self {
        let mut b = Schema::builder();
        let url = b.add_text_field("url", STRING | STORED);
        let url_hash = b.add_u64_field("url_hash", FAST);
        let page = b.add_u64_field("page", FAST | STORED | INDEXED);
        let text = |record: IndexRecordOption| {
            TextOptions::default()
                .set_indexing_options(
                    TextFieldIndexing::default()
                        .set_tokenizer(ANALYZER_NAME)
                        .set_index_option(record),
                )
                .set_stored()
        };
        let title = b.add_text_field("title", text(IndexRecordOption::WithFreqs));
        let body = b.add_text_field("body", text(IndexRecordOption::WithFreqsAndPositions));
        let links = b.add_u64_field("links", STORED);
        RepoSchema {
            schema: b.build(),
            url,
            url_hash,
            page,
            title,
            body,
            links,
        }
    }

    /// Field handles of an existing schema (an index reopened from disk).
    pub fn from_schema(schema: Schema) -> tantivy::Result<Self> {
        let f = |name: &str| schema.get_field(name);
        Ok(RepoSchema {
            url: f("url")?,
            url_hash: f("url_hash")?,
            page: f("page")?,
            title: f("title")?,
            body: f("body")?,
            links: f("links")?,
            schema,
        })
    }
}

/// The stable hash of a URL used to break score ties: xxh3-64 of its bytes.
///
/// Stable across runs, platforms and index layouts, unlike tantivy's `DocAddress`, which
/// changes when segments merge.
pub fn url_hash(url: &str) -> u64 {
    xxhash_rust::xxh3::xxh3_64(url.as_bytes())
}
