//! [`UrlCatalogue`]: the crawler's URL ↔ page id map. Page ids are dense and never reused; a
//! crawl that meets a new URL interns it and gets the next id, so every per-page structure
//! downstream (crawl state, policies, the forward index) grows by appending.

use std::collections::HashMap;
use std::sync::Arc;

use crate::corpus::PageId;

/// URL ↔ dense page id, growable.
#[derive(Debug, Clone, Default)]
pub struct UrlCatalogue {
    urls: Vec<Arc<str>>,
    ids: HashMap<Arc<str>, PageId>,
}

impl UrlCatalogue {
    /// A catalogue of `urls`, ids in the given order (duplicates keep their first id).
    pub fn from_urls<'a>(urls: impl IntoIterator<Item = &'a str>) -> Self {
        let mut catalogue = UrlCatalogue::default();
        for u in urls {
            catalogue.intern(u);
        }
        catalogue
    }

    /// The id of `url`, allocating the next id for a URL never seen. `None` only when the
    /// id space (`u32`) is exhausted.
    pub fn intern(&mut self, url: &str) -> Option<PageId> {
        if let Some(&id) = self.ids.get(url) {
            return Some(id);
        }
        let id = PageId::try_from(self.urls.len()).ok()?;
        let url: Arc<str> = url.into();
        self.urls.push(Arc::clone(&url));
        self.ids.insert(url, id);
        Some(id)
    }

    pub fn id(&self, url: &str) -> Option<PageId> {
        self.ids.get(url).copied()
    }

    pub fn url(&self, page: PageId) -> Option<&str> {
        self.urls.get(page as usize).map(|u| &**u)
    }

    pub fn len(&self) -> usize {
        self.urls.len()
    }

    pub fn is_empty(&self) -> bool {
        self.urls.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn new_urls_get_the_next_id_and_known_ones_keep_theirs() {
        let mut c = UrlCatalogue::from_urls(["https://a/", "https://b/"]);
        assert_eq!(c.len(), 2);
        assert_eq!(c.intern("https://b/"), Some(1));
        assert_eq!(c.intern("https://c/"), Some(2));
        assert_eq!(c.url(2), Some("https://c/"));
        assert_eq!(c.id("https://a/"), Some(0));
        assert_eq!(c.id("https://z/"), None);
        assert_eq!(c.url(9), None);
    }
}
