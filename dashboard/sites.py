"""The merchant dashboard's admin site: Django's, named for the product, with a home page
of today's figures, and every URL scoped to the user's merchants.

Signing in takes two steps for users with an authenticator app, and for the operator
and shop owners when RECECO_DASHBOARD_REQUIRE_2FA is on (dashboard.twofactor): until the
second is done, every page sends the session to it (dashboard.signin_views). Setting the
app up takes proof beyond the password (dashboard.enrolment).

Django's "view on site" shortcut (``/admin/r/<content type>/<id>/``) redirects any staff
user to any object's page; here it goes only to objects the user may view in this site
(dashboard.scoping), and answers 404 for everything else, malformed ids included.
"""

from django.contrib import admin
from django.contrib.admin.utils import unquote
from django.contrib.auth import REDIRECT_FIELD_NAME
from django.contrib.contenttypes.models import ContentType
from django.http import Http404, HttpRequest, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.decorators import method_decorator
from django.views.decorators.cache import never_cache

from dashboard import join, navigation, signin_views
from dashboard.scoping import merchant_ids
from dashboard.today import today
from merchants.models import Merchant
from receipts import daily

# The home page shows today's figures of at most this many merchants (an operator has
# every merchant; the list of merchants is the place to find the others).
HOME_MERCHANTS = 12


class DashboardSite(admin.AdminSite):
    site_header = "Receco dashboard"
    site_title = "Receco dashboard"
    index_title = "Today"
    site_url = "/"  # the public home page, which sends customers to the scanner
    # The navigation is by task (dashboard.navigation), on every page and every screen size.
    enable_nav_sidebar = False

    def each_context(self, request: HttpRequest) -> dict:
        tasks = navigation.tasks(self, request)
        return {**super().each_context(request), "tasks": tasks, "section": navigation.section(tasks)}

    def has_permission(self, request: HttpRequest) -> bool:
        return super().has_permission(request) and not signin_views.second_step_pending(request)

    @method_decorator(never_cache)
    def login(self, request: HttpRequest, extra_context=None):
        """The password step; a user with a second step to take is sent on to it."""
        response = super().login(request, {"title": "Sign in", **(extra_context or {})})
        # The password step may have signed in another user than the one looked at before.
        request.__dict__.pop("receco_second_step", None)
        if signin_views.second_step_pending(request):
            target = request.POST.get(REDIRECT_FIELD_NAME) or request.GET.get(REDIRECT_FIELD_NAME) or ""
            return HttpResponseRedirect(signin_views.second_step_url(request, target or reverse("admin:index")))
        return response

    def index(self, request: HttpRequest, extra_context=None) -> TemplateResponse:
        """The home page: today's sales, takings and deliveries of each of the user's shops.

        Test merchants (``test-…``, made by a till's first test sale) get no panel of their
        own: they are listed apart, with their test sales, marked as tests."""
        ids = merchant_ids(request)
        merchants = Merchant.objects.all() if ids is None else Merchant.objects.filter(pk__in=ids)
        shops, tests = merchants.filter(is_test=False), merchants.filter(is_test=True)
        days = [today(merchant) for merchant in shops[:HOME_MERCHANTS]]
        test_days = [today(merchant) for merchant in tests[:HOME_MERCHANTS]]
        more = (len(days) == HOME_MERCHANTS and shops.count() > HOME_MERCHANTS) or (
            len(test_days) == HOME_MERCHANTS and tests.count() > HOME_MERCHANTS
        )
        context = {
            "days": days,
            "test_days": test_days,
            "more_merchants": more,
            "sales_meaning": daily.MEANING,
            "operator": ids is None,
            # Today's search box: the receipts list's, for those who may see it.
            "find_url": reverse(f"{self.name}:receipts_receipt_changelist")
            if any(task.model == "receipts.receipt" for task in navigation.tasks(self, request))
            else "",
        }
        return super().index(request, {**context, **(extra_context or {})})

    def get_urls(self):
        scoped = path(
            "r/<int:content_type_id>/<path:object_id>/", self.admin_view(self.view_on_site), name="view_on_site"
        )
        two_step = [
            path("sign-in/code/", never_cache(self._code_view), name="sign_in_code"),
            path("two-step/", never_cache(self._two_step_view), name="two_step"),
            path("two-step/link/", never_cache(self._two_step_link_view), name="two_step_link"),
            # An invitation's link: before any account exists, so outside the admin's wrapper.
            path("join/<str:token>/", never_cache(self._join_view), name="join"),
        ]
        urls = [scoped if getattr(url, "name", None) == "view_on_site" else url for url in super().get_urls()]
        # Signing out works between the two steps too (the admin's wrapper would refuse it).
        urls = [
            path("logout/", never_cache(self.logout), name="logout") if getattr(url, "name", None) == "logout" else url
            for url in urls
        ]
        return [*two_step, *urls]

    def _code_view(self, request: HttpRequest):
        return signin_views.code_view(self, request)

    def _join_view(self, request: HttpRequest, token: str):
        return join.join_view(self, request, token)

    def _two_step_view(self, request: HttpRequest):
        return signin_views.two_step_view(self, request)

    def _two_step_link_view(self, request: HttpRequest):
        return signin_views.link_view(self, request)

    def view_on_site(self, request: HttpRequest, content_type_id: int, object_id: str) -> HttpResponseRedirect:
        """Redirect to the page of an object this user may view here; Http404 otherwise."""
        try:
            model = ContentType.objects.get_for_id(content_type_id).model_class()
        except ContentType.DoesNotExist:
            raise Http404 from None
        if model is None or not self.is_registered(model):
            raise Http404
        model_admin = self.get_model_admin(model)
        if not model_admin.view_on_site:
            raise Http404
        # The admin's own look-up: its queryset is scoped, and a malformed id gives None.
        obj = model_admin.get_object(request, unquote(object_id))
        if obj is None or not model_admin.has_view_or_change_permission(request, obj):
            raise Http404
        if callable(model_admin.view_on_site):
            url = model_admin.view_on_site(obj)
        else:
            url = getattr(obj, "get_absolute_url", lambda: None)()
        if not url:
            raise Http404
        return HttpResponseRedirect(url)
